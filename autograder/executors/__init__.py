"""What runs many notebooks: one contract (``base``) that the local process pool (``local``,
with its early-launched slots, ``early``) and a Ray cluster (``ray``) implement side by side,
chosen by name (``choice``); ``runmarker`` finds every process of a run."""
