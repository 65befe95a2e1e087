"""Process state that an example or an import changes for every later example sharing the process,
restored as a reader's new process has it: tools/reader/runtime_fresh.py, which check_guide.py
carries too, so that the reader's check and the tests run each snippet the same way."""

from tools.reader.runtime_fresh import as_in_a_new_process  # noqa: F401
