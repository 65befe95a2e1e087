"""Measured cost of each technique: torch memory to the byte, CPU time as a ratio.

    python -m tools.measure.benchmark                # measure, write the results, tables and figures
    python -m tools.measure.benchmark --render-only  # redraw tables and figures from results.json

Writes snippets/cost/benchmark/results.json (every figure), snippets/cost/benchmark/<model>.md (the table
rows the cost page includes; per-sample.md and amp.md: per-sample gradients and mixed precision,
measured by tools/measure/training_cost.py) and docs/assets/benchmark-memory.svg (.zh.svg: the same figure,
labelled in Chinese). tests/test_benchmark.py checks that the tables and figures are the ones
results.json gives, that the stored figures keep the relations the page states, and re-measures
those relations exactly on small models.

Memory: torch.profiler with profile_memory=True records every allocation and free of torch's CPU
allocator. Their running sum, from just before the forward pass, gives the step's peak and what
is still held when the step is over (the result the technique leaves you, the parameters' .grad
included). It counts torch tensors only, to the byte, and is the same on every run.

Time: process CPU time of one whole step (forward, backward, capture) with one thread. Each
technique's steps alternate with plain `loss.backward()` steps, after one warm-up of each; the
ratio is the median of the first over the median of the second. Ratios are reported, never
asserted: they vary from run to run.

With CUDA, the same steps also run on the GPU: torch.cuda.max_memory_allocated and CUDA-event
timing. CI has no GPU; nothing depends on it.

The package, by concern: workloads.py (the two models and each technique's training step),
measurement.py (profiler memory, CPU time, CUDA; one run over the workloads), report.py (the
tables, the figures, results.json) and __main__.py (the command line above).
"""
