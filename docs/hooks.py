"""mkdocs hook: publish the zoo's figures (results/figures) as part of the site.

The figures are produced by ``attention-lab report``; adding them as site files (instead of
copying them into docs/) keeps one copy in the repository and lets ``mkdocs build --strict``
check every link to them.
"""

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]


def on_files(files, config, **kwargs):
    """Add every file of results/figures to the site as figures/<name>."""
    source = ROOT / "results"
    for path in sorted((source / "figures").glob("*")):
        if path.is_file():
            files.append(File(f"figures/{path.name}", src_dir=str(source), dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    return files
