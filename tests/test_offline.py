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


def test_no_example_downloads():
    offenders = []
    for path in snippet_paths():
        code = Snippet.load(path).script()
        offenders += [f"{path.name}: {m.group(0)}" for m in DOWNLOADS.finditer(code)]
    for path in script_paths():
        offenders += [f"{path.name}: {m.group(0)}" for m in DOWNLOADS.finditer(path.read_text())]
    assert not offenders, f"examples must build their models offline: {offenders}"
