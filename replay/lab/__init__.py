"""``mbstate lab``: scenarios (truth, the estimator's model with its errors, sensor sets, seeds) ×
estimators → RMSE table and an HTML report; suite (the file), cells (one simulation and estimate),
runner (Dask distributed, progress bar), report (table, plots)."""
