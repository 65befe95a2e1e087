"""The snippet model, shared by every other package: what a snippet is and where it lives
(model), the releases its output holds on (gates), what it prints on the others (releases).

Imports nothing from the rest of tools/, and no torch: the site build imports it.
"""

from tools.snippets.gates import Gate, torch_release, version_gates  # noqa: F401
from tools.snippets.model import (  # noqa: F401
    DISTRIBUTED_MAIN, DISTRIBUTED_TIMEOUT, DOCS, FENCE, FLAGS, ROOT, SCRIPT_TIMEOUT, SNIPPETS, TITLE,
    GENERATED, RELEASES, SHARED, Snippet, copied_code, find, is_distributed, is_snippet, load_all, rel, script_paths,
    snippet_paths, source,
)
