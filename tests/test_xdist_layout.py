"""tests/conftest.py's layout of the collection for `--dist worksteal`: the same tests, the heavy units
dealt over the workers' blocks and leading them, the tests of one shared unit kept together."""
from conftest import _unit_key, block_sizes, layout


class Item:
    def __init__(self, nodeid):
        self.nodeid = nodeid


def _unit(item):
    path, _, rest = item.nodeid.partition("::")
    return (path, rest.split("[", 1)[1]) if path == "m/shared.py" else item.nodeid


WEIGHTS = {"m/a.py::big": 50, "m/a.py::mid": 30, "m/b.py::mid2": 25, "m/shared.py::first": 10}


def _weigh(nodeid):
    return WEIGHTS.get(nodeid, WEIGHTS.get(nodeid.split("[", 1)[0], 0))


ITEMS = ([Item(f"m/light.py::t{i}") for i in range(12)] + [Item("m/a.py::big"), Item("m/a.py::mid")]
         + [Item(f"m/shared.py::{t}[{p}]") for p in ("x", "y") for t in ("first", "second")]
         + [Item("m/b.py::mid2")] + [Item(f"m/late.py::t{i}") for i in range(5)])


def test_block_sizes_are_worksteals_first_distribution():
    assert block_sizes(23, 2) == [11, 12] and block_sizes(7, 3) == [2, 2, 3] and sum(block_sizes(2092, 2)) == 2092


def test_layout_deals_the_heavy_units_first_and_keeps_shared_ones_together():
    out = layout(ITEMS, 2, weigh=_weigh, unit_key=_unit)
    ids = [i.nodeid for i in out]
    assert sorted(ids) == sorted(i.nodeid for i in ITEMS)                  # the same tests, once each
    first, second = ids[:block_sizes(len(ids), 2)[0]], ids[block_sizes(len(ids), 2)[0]:]
    assert first[0] == "m/a.py::big" and second[0] == "m/a.py::mid"       # the longest lead each block
    assert second[1] == "m/b.py::mid2"                                    # to the lighter block
    for p in ("x", "y"):                                                  # a shared unit stays adjacent
        i = ids.index(f"m/shared.py::first[{p}]")
        assert ids[i + 1] == f"m/shared.py::second[{p}]"
        assert (i < len(first)) == (i + 1 < len(first))
    light = [n for n in ids if n.startswith(("m/light.py", "m/late.py"))]
    assert light == [i.nodeid for i in ITEMS if i.nodeid.startswith(("m/light.py", "m/late.py"))]


def test_layout_leaves_a_collection_without_heavy_tests_alone():
    items = [Item(f"m/light.py::t{i}") for i in range(6)]
    assert layout(items, 2, weigh=_weigh, unit_key=_unit) == items
    assert layout(ITEMS, 1, weigh=_weigh, unit_key=_unit) == ITEMS


class Used(Item):
    """An item as pytest makes it, as far as `_unit_key` looks: its fixtures, no module-scoped one."""
    def __init__(self, nodeid, fixtures=()):
        super().__init__(nodeid)
        self.fixturenames = list(fixtures)
        self._fixtureinfo = None


def test_tests_using_the_spark_session_are_one_unit_across_modules():
    a = Used("tests/test_spark_explore.py::t[x]", ["spark", "spark_process_session"])
    b = Used("tests/test_liveness_spark.py::u", ["spark_process_session", "tmp_path"])
    c = Used("tests/test_spark_explore.py::covers", [])
    assert _unit_key(a) == _unit_key(b) != _unit_key(c)
    items = [Used(f"tests/test_light.py::t{i}") for i in range(6)] + [a, c, Used("tests/test_big.py::big")] + [b]
    heavy = {a.nodeid: 10, b.nodeid: 10, "tests/test_big.py::big": 25}
    ids = [i.nodeid for i in layout(items, 2, weigh=lambda n: heavy.get(n, 0))]
    first = block_sizes(len(ids), 2)[0]
    assert ids[0] == "tests/test_big.py::big" and ids[first:first + 2] == [a.nodeid, b.nodeid]   # together, one block


def test_every_weight_names_a_test_function_that_exists():
    """A weight whose test was renamed or moved weighs nothing, silently: each key must name a test function of
    its file (the parameter ids are not checked here)."""
    import os

    from conftest import WEIGHTS

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def missing(weights):
        out = []
        for key in weights:
            path, _, name = key.partition("::")
            func = name.split("[", 1)[0]
            full = os.path.join(root, path)
            if not os.path.isfile(full) or f"def {func}(" not in open(full, encoding="utf-8").read():
                out.append(key)
        return out

    assert missing(WEIGHTS) == []
    assert missing({"tests/test_proofs.py::test_no_such_test[x]": 1, "tests/no_such_file.py::test_x": 1}) == [
        "tests/test_proofs.py::test_no_such_test[x]", "tests/no_such_file.py::test_x"]
