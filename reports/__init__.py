"""The reports and figures: ``results/`` tables and the docs' figures, from the zoo's evaluations and models.

Run ``python -m reports`` (see [`reports.report`][reports.report]). This package uses the library and the app's
plotting; neither of them imports it.
"""
