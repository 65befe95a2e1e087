"""check_guide.py, the reader's check of every example on their own torch.

runtime_*.py are its code, in parts (standard library only, it runs on the reader's machine):
runtime_head.py its start, imports and the names of the guide's data, runtime_compare.py comparing
outputs (the gates, the results, the tracebacks), runtime_run.py running the examples,
runtime_main.py the whole check, its command line and the place of the data. Each part takes names
only from the parts before it (head <- compare <- run <- main), so the joined file reads top down.
checker.py joins them into one file with the guide's examples as data and writes it
(`python -m tools.reader.checker --out FILE`; the site's downloads hook serves it). May import:
tools.snippets.
"""
