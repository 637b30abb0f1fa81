"""mpsbench_core: the definitions the sweep (harness/sweep) and the analysis (analysis/) share.

Standard library only, so the sweep still runs on a bare GPU node:
  modes    the sharing-mode registry (name, MPS or not, one process or several, order, figure style)
  verdict  the one answer: best ranks per GPU, MPS gain, crossover, and the verdict sentences
  records  typed views of results records of every schema version (kernel, mix and app kinds)
  stats    median, percentiles, CV, the noise figure, Jain's fairness, Mann-Whitney U
  units    SI formatting of figures for people
  text     printable text for a terminal: control characters escaped
  sweep_settings  the settings a sweep records in context.sweep (gain_threshold among them)
"""
