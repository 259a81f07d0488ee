"""Analysis: metrics, evaluation, alignment against human links, attribution, calibration."""
