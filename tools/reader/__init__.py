"""check_guide.py, the reader's check of every example on their own torch.

runtime.py is its code (standard library only, it runs on the reader's machine); checker.py adds
the guide's examples as data and writes the file (`python -m tools.reader.checker --out FILE`;
the site's downloads hook serves it). May import: tools.snippets.
"""
