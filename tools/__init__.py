"""The guide's own code, one package per role. Which package runs when:

    snippets/   the snippet model: what a snippet is, where it lives, its version gates and the
                outputs other releases recorded. Shared by all the others; imports none of them.
    site/       MkDocs hooks (mkdocs.yml `hooks:`): run inside `mkdocs build`, without torch.
    reader/     check_guide.py, the file readers download to check the guide on their torch.
    examples/   runs the examples: the tests' evaluator, the offline guard, the distributed
                runner, the output refresher, the torch matrix's results, `make upgrade` and
                the newest torch's report.
    measure/    the cost page's benchmark and the Lighthouse scores.
    generate/   committed files made from snippets and torch: notebooks, figures, social card.
    dev/        developer tasks: the Python check before install, the local server + Chromium.

What may import what (tests/test_layout.py checks it): site may import snippets, reader and
generate; reader only snippets; examples snippets and reader (the tests restore the process
between snippets with the reader's own part, runtime_fresh.py, so both run a snippet alike);
measure and generate snippets and dev; nothing imports site, examples or measure but the tests,
and nothing here imports tests/. So the build hooks and the tests' runtime meet only in the snippet
model and in the reader's check_guide.py, which both of them carry.
"""
