"""The four notebooks run top to bottom on the demo store (nbclient, a real kernel), so they
never rot; and they are committed as sources, without outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["01_explore_memories.ipynb", "02_step_through_a_recall.ipynb",
         "03_curate_anchors_and_review.ipynb", "04_export_graphs.ipynb"]


@pytest.fixture(scope="module")
def store(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private copy of the demo store for every notebook of this module."""
    dst = tmp_path_factory.mktemp("nb") / "store"
    shutil.copytree(demo_store_template, dst)
    return dst


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_a_clean_source(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, name
    assert all(not c.outputs and c.execution_count is None for c in code), (
        f"{name} has committed outputs; clear them before committing")
    assert "widgets" not in nb.metadata, f"{name} has saved widget state"
    assert nb.cells[0].cell_type == "markdown"
    assert nb.cells[0].source.startswith("# ")


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(name: str, store: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKASHA_STORE", str(store))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if o.output_type in ("display_data", "execute_result")
               and "application/vnd.jupyter.widget-view+json" in o.data]
    assert widgets, f"{name} shows no panel"
