// akasha_explorer graph schema — version 5 (graphdb/migrations.py moves older stores here).
// Raw messages live in LanceDB only; Kuzu holds pointers, structure, state and the short
// surfaces and quotes extraction reads out of them (forget purges those too, SPEC §6).
// Times are DOUBLE seconds since the Unix epoch (UTC).
CREATE NODE TABLE Meta(key STRING PRIMARY KEY, value STRING);
CREATE NODE TABLE Session(uid STRING PRIMARY KEY, source STRING, first_ts DOUBLE, last_ts DOUBLE);
CREATE NODE TABLE Turn(uid STRING PRIMARY KEY, ord INT64, session STRING, ts DOUBLE, message_uids STRING[], roles STRING[], assistant_only BOOLEAN, sigma DOUBLE, strength DOUBLE, strength_ts DOUBLE, resource DOUBLE, resource_ts DOUBLE, recall_count INT64, replayed BOOLEAN, flags STRING[]);
CREATE NODE TABLE Anchor(uid STRING PRIMARY KEY, name STRING, kind STRING, status STRING, created_ts DOUBLE, note STRING);
CREATE NODE TABLE Alias(uid STRING PRIMARY KEY, surface STRING, norm STRING, created_ts DOUBLE);
CREATE NODE TABLE Episode(uid STRING PRIMARY KEY, kind STRING, label STRING, session STRING, start_ts DOUBLE, end_ts DOUBLE);
CREATE NODE TABLE Triple(uid STRING PRIMARY KEY, predicate STRING, object_literal STRING, confidence DOUBLE, status STRING, valid_from DOUBLE, superseded_by STRING, node STRING, span_start INT64, span_end INT64, quote STRING, created_ts DOUBLE, slot STRING);
CREATE NODE TABLE ReviewItem(uid STRING PRIMARY KEY, kind STRING, status STRING, subject STRING, payload STRING, confidence DOUBLE, created_ts DOUBLE, decided_ts DOUBLE, decided_by STRING, why STRING);
CREATE NODE TABLE QueryLog(uid STRING PRIMARY KEY, ts DOUBLE, query STRING, session STRING, method STRING, n_seeds INT64, n_pool INT64, n_activated INT64, n_dense INT64, n_ripple INT64, empty BOOLEAN, committed BOOLEAN, latency_ms DOUBLE, seeds STRING, items STRING);
CREATE NODE TABLE Forgotten(uid STRING PRIMARY KEY, ts DOUBLE);
CREATE NODE TABLE AuditLog(uid STRING PRIMARY KEY, ts DOUBLE, actor STRING, action STRING, target STRING, why STRING, before STRING, after STRING, undone BOOLEAN);
CREATE NODE TABLE Label(uid STRING PRIMARY KEY, query STRING, node STRING, relevant BOOLEAN, ts DOUBLE, by STRING);
CREATE NODE TABLE CoactPruned(uid STRING PRIMARY KEY, co_count INT64, edges INT64);
CREATE REL TABLE NEXT(FROM Turn TO Turn);
CREATE REL TABLE IN_SESSION(FROM Turn TO Session);
CREATE REL TABLE COACT(FROM Turn TO Turn, weight DOUBLE, last_ts DOUBLE, co_count INT64);
CREATE REL TABLE MENTIONS(FROM Turn TO Anchor, msg STRING, span_start INT64, span_end INT64, surface STRING);
CREATE REL TABLE ALIAS_OF(FROM Alias TO Anchor);
CREATE REL TABLE FACT(FROM Triple TO Anchor, role STRING);
CREATE REL TABLE IN_EPISODE(FROM Turn TO Episode);
