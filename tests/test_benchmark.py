"""The cost page's figures.

The stored run (snippets/cost/benchmark/results.json, written by `make benchmark`) must keep every
memory relation the page states, and every table and figure must be the one it gives. The same
relations are then re-measured, to the byte, on small versions of the two models: memory is
deterministic, so they hold exactly on any machine. Time ratios are reported, never asserted.
"""

from __future__ import annotations

import re

import pytest

from tools.measure.benchmark import measurement, report, workloads
from tools.snippets import DOCS, ROOT


def relations(results: dict, print_peak: bool = True) -> list[tuple[str, int, int]]:
    """(statement, measured, expected) for every memory relation the cost page states.

    print_peak: printing formats the gradient with a few small temporaries; on the page's models
    they stay under the peak, on tiny models they can raise it by about 900 bytes (896 on the small MLP).
    """
    checks = []
    for model, info in results["models"].items():
        rows = {r["technique"]: r for r in results["rows"] if r["model"] == model}
        plain, taps = rows["plain"], info["tap_bytes"]

        def held(key):
            return rows[key]["held_bytes"]

        if print_peak:
            checks.append((f"{model}: a printing hook adds nothing to the peak",
                           rows["print_hook"]["peak_bytes"], plain["peak_bytes"]))
        checks += [
            (f"{model}: a printing hook holds nothing", held("print_hook"), held("plain")),
            (f"{model}: keeping references holds the activations", held("keep_references"),
             held("plain") + taps),
            (f"{model}: retain_grad() holds activations and gradients", held("retain_grad"),
             held("plain") + 2 * taps),
            (f"{model}: forward hook + tensor hook holds what retain_grad() holds",
             held("grad_cam_hooks"), held("retain_grad")),
            (f"{model}: backward(inputs=) holds what retain_grad() holds", held("backward_inputs"),
             held("retain_grad")),
        ]
        for key in ("storing_hook", "node_prehook", "multi_grad_hook",
                    "module_full_backward_hooks", "autograd_grad_once", "autograd_grad_per_tap",
                    "gradient_edges", "custom_function_tap", "func_perturbation"):
            checks.append((f"{model}: {key} holds the gradients only", held(key), held("plain") + taps))
        highest = max(r["peak_bytes"] for k, r in rows.items() if k != "func_perturbation")
        checks.append((f"{model}: torch.func with zero taps has the highest peak",
                       int(rows["func_perturbation"]["peak_bytes"] > highest), 1))
    return checks


def training_relations(training: dict) -> list[tuple[str, int, int]]:
    """(statement, measured, expected) for the per-sample and mixed-precision rows."""
    rows = {(r["group"], r["method"]): r for r in training["rows"]}
    per_sample = training["batch"] * training["param_bytes"]
    opacus = [("Opacus: holds grad_sample and .grad", rows["per_sample", "opacus"]["held_bytes"],
               per_sample + training["param_bytes"])] if ("per_sample", "opacus") in rows else []
    return opacus + [
        ("loop: holds batch × the parameters' bytes", rows["per_sample", "loop"]["held_bytes"], per_sample),
        ("vmap: holds batch × the parameters' bytes", rows["per_sample", "vmap_grad"]["held_bytes"], per_sample),
        ("loop: peaks at twice what it holds (the list and the stack)",
         rows["per_sample", "loop"]["peak_bytes"] >= 2 * per_sample, True),
        ("bfloat16 autocast: .grad stays float32, as much as in float32",
         rows["amp", "bfloat16"]["held_bytes"], rows["amp", "float32"]["held_bytes"]),
        ("float16 + GradScaler: .grad stays float32, as much as in float32",
         rows["amp", "float16_scaled"]["held_bytes"], rows["amp", "float32"]["held_bytes"]),
    ]


STORED = report.load() if report.RESULTS.exists() else None


def test_the_stored_run_exists():
    assert STORED is not None, f"{report.RESULTS.relative_to(ROOT)} is missing: run `make benchmark`"
    assert set(STORED) >= {"machine", "method", "models", "techniques", "rows", "training"}
    for model in STORED["models"]:
        measured = {r["technique"] for r in STORED["rows"] if r["model"] == model}
        assert measured == {t.key for t in workloads.TECHNIQUES}, f"{model}: techniques missing"


STORED_RELATIONS = (relations(STORED) + training_relations(STORED["training"])) if STORED else []


@pytest.mark.parametrize("statement, measured, expected", STORED_RELATIONS,
                         ids=[statement for statement, _, _ in STORED_RELATIONS])
def test_the_stored_run_keeps_the_stated_relations(statement, measured, expected):
    assert measured == expected, f"{statement}: {measured} != {expected} in results.json"


def test_tables_and_figures_are_drawn_from_the_stored_run():
    for path, content in report.render(STORED).items():
        rel = path.relative_to(ROOT)
        assert path.is_file(), f"{rel} is missing: run `python -m tools.measure.benchmark --render-only`"
        assert path.read_text(encoding="utf-8") == content, (
            f"{rel} is not what results.json gives: run `python -m tools.measure.benchmark --render-only`"
        )


@pytest.mark.parametrize("page", ["cost.md", "cost.zh.md"])
def test_every_figure_in_the_prose_comes_from_the_run(page):
    """A MiB or × figure typed into the prose must be one the stored run produced."""
    text = (DOCS / page).read_text(encoding="utf-8")
    known = set()
    for row in STORED["rows"]:
        known |= {report._mib(row["peak_bytes"]), report._mib(row["held_bytes"])}
        if "time_ratio" in row:
            known.add(f"{row['time_ratio']:.2f}")
    for model in STORED["models"].values():
        known |= {report._mib(model["tap_bytes"]), report._mib(model["param_bytes"])}
    for row in STORED["training"]["rows"]:
        known |= {report._mib(row["peak_bytes"]), report._mib(row["held_bytes"]),
                  f"{row.get('time_ratio', 0):.2f}"}
    known.add(report._mib(STORED["training"]["param_bytes"]))
    for model in STORED["models"]:
        table = {r["technique"]: r for r in STORED["rows"] if r["model"] == model}
        base = table["plain"]
        for r in table.values():
            known.add(report._delta(r["peak_bytes"], base["peak_bytes"]).lstrip("+"))
            known.add(report._delta(r["held_bytes"], base["held_bytes"]).lstrip("+"))
    for figure in re.findall(r"(\d+(?:\.\d+)?) ?(?:MiB|×)", text):
        assert figure in known, f"docs/{page}: {figure} is not a figure of results.json"


# --- Re-measured on small models ------------------------------------------------------------

def small_workloads() -> list[workloads.Workload]:
    return [workloads.mlp(width=32, depth=8, batch=8),
            workloads.cnn(channels=4, depth=8, batch=1, size=8)]


@pytest.fixture(scope="module")
def small_run():
    return measurement.run(small_workloads(), repeats=0, timing=False)


def test_memory_is_measured_to_the_byte():
    import torch

    def step():
        scratch = torch.empty(1024 * 1024)  # 4 MiB, freed before the step ends
        kept = torch.empty(2 * 1024 * 1024)  # 8 MiB, returned
        del scratch
        return kept

    assert measurement.memory(step) == (12 * 2**20, 8 * 2**20)


def test_relations_hold_on_small_models(small_run):
    failed = [f"{s}: {m} != {e}" for s, m, e in relations(small_run, print_peak=False) if m != e]
    assert not failed, "\n".join(failed)


def test_memory_figures_repeat_exactly(small_run):
    again = measurement.run(small_workloads(), repeats=0, timing=False)
    assert again["rows"] == small_run["rows"]


def test_training_relations_hold_on_a_small_model():
    """Per-sample gradients by the loop and vmap (which must agree, or the run raises) and mixed
    precision, on a width-16 classifier: the memory relations hold to the byte. Opacus' row is
    checked on the stored run only: Opacus 1.6 does not import with every torch the matrix runs."""
    small = measurement.measure_training(0, timing=False, width=16, batch=4, amp_batch=8,
                                         with_opacus=False)
    failed = [f"{s}: {m} != {e}" for s, m, e in training_relations(small) if m != e]
    assert not failed, "\n".join(failed)
