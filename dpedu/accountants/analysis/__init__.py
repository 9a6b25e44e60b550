"""The mathematics the accountants share, apart from the accountant classes.

No module here holds a ledger or an accountant; each is a set of functions of numbers (orders, curves,
log-moments, conversions), so a student can read and test the formulas on their own:

- ``orders``: grids of Rényi orders, the check every order argument passes, the edge-of-grid warning;
- ``log_moments`` and ``log_moments_integrated``: the sampled Gaussian's log-moments, in closed form and by
  numerical integration (docs/math.md §12.4);
- ``rdp_curves``: Rényi-DP curves of the Gaussian, the sampled Gaussian, Laplace and pure DP (§13.2, §13.5);
- ``conversions``: from an RDP curve to :math:`(\\varepsilon, \\delta)` (§13.4);
- ``composition``: per-step :math:`(\\varepsilon, \\delta)` of each event for the composition theorems.
"""
