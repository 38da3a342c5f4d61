"""Export (SPEC §9): GraphML (:mod:`.graphml`), GEXF 1.3 (:mod:`.gexf`), node-link JSON,
Parquet and CSV (:mod:`.formats`), standalone offline HTML (:mod:`.html`), the whole-store
export and import (:mod:`.store`); :mod:`.sanitize` gives every attribute one plain type,
:mod:`.viz` the layout, colours and sizes.
"""
