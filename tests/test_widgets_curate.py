"""AnchorCurator, ReviewQueue and CommunitiesPanel driven by their buttons against the real
demo store; each assertion checks the store through the Memory API afterwards."""

from __future__ import annotations

import html

import akasha_explorer as ak
from akasha_explorer.widgets import AnchorCurator, CommunitiesPanel, ReviewQueue
from akasha_explorer.widgets.communities import TOP_TURNS


def _aliases(mem: ak.Memory, uid: str) -> list[str]:
    return [a.surface for a in mem.anchors.get(uid).aliases]


def _pick(c: AnchorCurator, name: str) -> str:
    uid = next(r.uid for r in c._rows if r.name == name)
    c.anchor_list.value = uid
    return uid


# -- AnchorCurator -------------------------------------------------------------------------
def test_curator_lists_searches_and_quotes_mentions(ro_mem: ak.Memory) -> None:
    c = AnchorCurator(ro_mem)
    assert len(c.anchor_list.options) == len(ro_mem.anchors())
    c.search_box.value = "Lan"
    c.search_button.click()
    names = c.anchors_df()["name"].tolist()
    assert names
    assert all("lan" in (n + " ".join(a)).lower()
               for n, a in zip(names, c.anchors_df()["aliases"], strict=True))
    uid = c.anchor_list.options[0][1]
    c.anchor_list.value = uid
    detail = ro_mem.anchors.get(uid)
    df = c.mentions_df()
    assert len(df) == len(detail.mentions)
    for r in df.head(10).itertuples():  # the quoted surface is the verbatim span
        assert r.text[r.span_start:r.span_end] == r.surface
        assert f"<mark>{r.surface}</mark>" in c.detail.value or "&" in r.surface
    assert all(b.disabled for b in (c.rename_button, c.merge_button, c.undo_button))


def test_curator_filters_every_anchor_kind(ro_mem: ak.Memory) -> None:
    """The kind filter offers every kind extraction makes — organisations too (the panel
    had its own list without "org", so an organisation could not be filtered)."""
    from akasha_explorer.model import ANCHOR_KINDS
    c = AnchorCurator(ro_mem)
    assert [v for _, v in c.kind.options][1:] == list(ANCHOR_KINDS)
    orgs = [a.name for a in ro_mem.anchors(kind="org")]
    assert orgs  # the demo has one: 瑞金医院
    c.kind.value = "org"
    c.search_button.click()
    assert c.anchors_df()["name"].tolist() == orgs


def test_curator_rename_alias_merge_split_undo(rw_mem: ak.Memory) -> None:
    m = rw_mem
    c = AnchorCurator(m)
    lan = _pick(c, "阿岚")
    c.rename_box.value = "岚"
    c.why.value = "what she is called most"
    c.rename_button.click()
    assert m.anchors.get(lan).name == "岚"
    assert m.audit(limit=1)[0].why == "what she is called most"
    c.alias_box.value = "Lanlan"
    c.add_alias_button.click()
    assert "Lanlan" in _aliases(m, lan)
    c.alias_pick.value = "Lanlan"
    c.remove_alias_button.click()
    assert "Lanlan" not in _aliases(m, lan)
    # split two aliases off, then merge them back
    c.split_pick.value = ("Lan", "@lan_the_warrior")
    c.split_name.value = "Lan (game)"
    c.split_button.click()
    new = next(r.uid for r in m.anchors(status=None) if r.name == "Lan (game)")
    assert set(_aliases(m, new)) >= {"Lan", "@lan_the_warrior"}
    assert "Lan" not in _aliases(m, lan)
    moved = len(m.anchors.get(new).mentions)
    assert moved > 0
    c.anchor_list.value = lan
    n_before = len(m.anchors.get(lan).mentions)
    c.merge_pick.value = new
    c.merge_button.click()
    assert len(m.anchors.get(lan).mentions) == n_before + moved
    assert "Lan" in _aliases(m, lan)
    # undo the merge through the panel
    merge_audit = m.audit(limit=1)[0]
    assert merge_audit.action == "merge"
    c.audit_pick.value = merge_audit.uid
    c.undo_button.click()
    assert len(m.anchors.get(lan).mentions) == n_before
    assert m.audit(limit=2)[1].undone
    # refused input reaches the status line, not an exception
    c.rename_box.value = ""
    c.rename_button.click()
    assert "type the new name" in c.status.value


# -- ReviewQueue ---------------------------------------------------------------------------
def test_review_approve_reject_edit_and_undo(rw_mem: ak.Memory) -> None:
    m = rw_mem
    q = ReviewQueue(m)
    pending0 = m.review.list()
    assert q.item is not None
    assert q.item.uid == pending0[0].uid
    first = q.item.uid
    q.why.value = "right"
    q.approve_button.click()
    assert m.review.get(first).status == "approved"
    assert m.review.get(first).why == "right"
    assert q.item is not None
    assert q.item.uid != first  # the next pending item opened
    second = q.item.uid
    q.reject_button.click()
    assert m.review.get(second).status == "rejected"
    assert len(m.review.list()) == len(pending0) - 2
    # edit an anchor candidate: new name, approved
    q.kind.value = "anchor"
    cand = q.item
    assert cand is not None
    assert cand.kind == "anchor"
    q.edit_field.value = "name"
    q.edit_value.value = "Raspberry Pi-hole"
    q.edit_button.click()
    assert m.review.get(cand.uid).status == "edited"
    assert m.anchors.get(cand.subject).name == "Raspberry Pi-hole"
    assert m.anchors.get(cand.subject).status == "active"
    # undo the approval of the first item through the panel
    audit = next(r.uid for r in m.audit(limit=10) if r.target == first)
    q.audit_pick.value = audit
    q.undo_button.click()
    assert m.review.get(first).status == "pending"
    assert "undid" in q.status.value
    df = q.audit_df()
    assert {"approve", "reject", "edit", "undo"} <= set(df["action"])


def test_review_shows_flagged_text_verbatim_and_escaped(ro_mem: ak.Memory) -> None:
    q = ReviewQueue(ro_mem)
    q.kind.value = "injection"
    items = ro_mem.review.list(kind="injection")
    assert [v for _, v in q.items.options] == [i.uid for i in items]
    tags = 0
    for it in items:
        q.items.value = it.uid
        node = ro_mem.store.mirror.nodes.uid[int(ro_mem.store.mirror.nodes.msg_node[
            ro_mem.store.mirror.nodes.msg_index[it.payload["message"]]])]
        msg = next(x for x in ro_mem.messages(node) if x.uid == it.payload["message"])
        assert html.escape(msg.text) in q.detail.value
        if "<" in msg.text:
            tags += 1
            assert msg.text not in q.detail.value
    assert tags  # the role-tag attempt has markup, shown escaped
    assert all(b.disabled for b in (q.approve_button, q.reject_button, q.undo_button))
    assert len(q.items_df()) == len(items)


# -- CommunitiesPanel ----------------------------------------------------------------------
def test_communities_panel_draws_communities_and_surprises(rw_mem: ak.Memory) -> None:
    m = rw_mem
    p = CommunitiesPanel(m)
    t = m.communities()
    assert p.table["community"].tolist() == t["community"].tolist()
    first = int(t["community"].iloc[0])
    members = set(str(t["members"].iloc[0]).split(","))
    shown = {n["id"] for n in p.view.nodes}
    assert shown <= members
    assert len(shown) == min(len(members), TOP_TURNS) < len(members)  # the big one is cut
    strength = dict(zip(members, p.data.strength(list(members)), strict=True))
    weakest_shown = min(strength[u] for u in shown)
    assert all(strength[u] <= weakest_shown for u in members - shown)  # the strongest
    labels = [n for n in p.view.nodes if n["label"]]
    assert 0 < len(labels) <= 12
    anchors = {a.name for a in m.anchors(status=None)}
    named = [lab for lab in t["label"] if set(lab.split(" / ")) <= anchors]
    assert len(named) >= len(t) // 2  # communities are named by the anchors they mention
    p.community_list.value = int(t["community"].iloc[1])
    assert {n["id"] for n in p.view.nodes} <= set(str(t["members"].iloc[1]).split(","))
    link = p.surprises.index[p.surprises["kind"] == "suggested_link"][0]
    p.surprise_list.value = int(link)
    row = p.surprises.loc[link]
    dashed = [e for e in p.view.edges if e.get("dashes")]
    assert [(e["from"], e["to"]) for e in dashed] == [(row["subject"], row["other"])]
    assert m.graph_view("nodes").edges.query(
        "source == @row.subject and target == @row.other").empty  # no edge of its own
    p.resolution.value = 2.0
    p.compute_button.click()
    assert len(p.table) >= len(t)
    assert first in p.table["community"].tolist()
    assert not m.review.list(kind="suggested_link")
    p.queue_button.click()
    assert len(m.review.list(kind="suggested_link")) > 0
    assert "queued" in p.status.value
    p.store_button.click()
    assert len(m.episodes(kind="community")) == len(p.table)
