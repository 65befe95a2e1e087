"""The real-model examples run offline (tools/examples/offline.py): these tests show that a download fails
loudly in the test process, and that no example asks for one."""

import re

import pytest

from tools.snippets import Snippet, script_paths, snippet_paths

# What fetches pretrained weights or files from a hub; the examples build their models instead.
DOWNLOADS = re.compile(
    r"from_pretrained\(|hf_hub_download|snapshot_download|load_state_dict_from_url|torch\.hub\.load"
    r"|pretrained=True|\bweights=(?!None\b)"  # \b: not need_weights=
)


def test_a_hub_download_fails():
    from transformers import AutoConfig

    with pytest.raises(OSError):
        AutoConfig.from_pretrained("google-bert/bert-base-uncased")


def test_a_torchvision_weights_download_fails():
    from torchvision.models import resnet18

    with pytest.raises(OSError, match="offline"):
        resnet18(weights="DEFAULT")


def _downloads(code: str) -> list[str]:
    """What the code fetches: a `from_pretrained(folder...)` of a folder the same code filled with
    `save_pretrained(folder)` (a model built from a config, saved and loaded again) is local."""
    saved = set(re.findall(r"\.save_pretrained\((\w+)\)", code))
    return [m.group(0) for m in DOWNLOADS.finditer(code)
            if not (m.group(0) == "from_pretrained(" and re.match(r"(\w+)[,)]", code[m.end():])
                    and re.match(r"(\w+)", code[m.end():]).group(1) in saved)]


def test_no_example_downloads():
    offenders = []
    for path in snippet_paths():
        offenders += [f"{path.name}: {hit}" for hit in _downloads(Snippet.load(path).script())]
    for path in script_paths():
        offenders += [f"{path.name}: {hit}" for hit in _downloads(path.read_text())]
    assert not offenders, f"examples must build their models offline: {offenders}"


def test_only_a_folder_the_example_saved_itself_counts_as_local():
    assert _downloads("m.save_pretrained(folder)\nM.from_pretrained(folder)") == []
    assert _downloads('M.from_pretrained("google-bert/bert-base-uncased")') == ["from_pretrained("]
    assert _downloads("M.from_pretrained(folder)") == ["from_pretrained("]
