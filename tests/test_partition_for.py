"""partition_for is bit-exact with Java's String.hashCode and Kafka's Utils.abs (digest §8.1-8.2).

Expected hashes come from the JDK on this machine (compiled and run in a temporary directory);
the test is skipped, with a printed reason, only when javac/java are missing.
"""
import json
import shutil
import subprocess

import pytest

from kverify.cli import main as cli_main
from kverify.impl.coordinator.partition import (
    INT_MIN, java_math_abs, java_rem, java_string_hash, partition_for, utils_abs)

IDS = ["polygenelubricants", "groupId", "", "otherGroup", "consumer-group-1", "grüße", "日本語のグループ",
       "emoji-😀-group", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "a\u0000b", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"]

JAVA = r"""
public class H {
  public static void main(String[] a) throws Exception {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = r.readLine()) != null) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < line.length(); i += 4) sb.append((char) Integer.parseInt(line.substring(i, i + 4), 16));
      String s = sb.toString();
      int h = s.hashCode();
      System.out.println(h + " " + (Math.abs(h) % 50));
    }
  }
}
"""


@pytest.fixture(scope="module")
def java_hashes(tmp_path_factory):
    javac, java = shutil.which("javac"), shutil.which("java")
    if not javac or not java:
        print("javac/java not found on PATH: cannot compute Java's hashes")
        pytest.skip("javac/java not found on PATH")
    d = tmp_path_factory.mktemp("javahash")
    (d / "H.java").write_text(JAVA)
    subprocess.run([javac, "H.java"], cwd=d, check=True, capture_output=True)
    # pass each id as UTF-16 code units in hex, so no console encoding can interfere
    lines = "\n".join("".join(f"{(b[i] << 8) | b[i + 1]:04x}" for i in range(0, len(b), 2))
                      for b in (s.encode("utf-16-be", "surrogatepass") for s in IDS)) + "\n"
    out = subprocess.run([java, "-cp", str(d), "H"], input=lines.encode(), capture_output=True, check=True)
    rows = out.stdout.decode().split("\n")
    return {s: tuple(int(x) for x in rows[i].split()) for i, s in enumerate(IDS)}


def test_hash_matches_java_bit_exactly(java_hashes):
    for s in IDS:
        h, math_abs_rem = java_hashes[s]
        assert java_string_hash(s) == h, s
        assert java_rem(java_math_abs(h), 50) == math_abs_rem, s
        assert partition_for(s, 50, frozenset({"math-abs-coordinator"})) == math_abs_rem, s
    assert java_hashes["polygenelubricants"][0] == INT_MIN


def test_polygenelubricants_is_partition_zero_and_negative_with_math_abs():
    assert java_string_hash("polygenelubricants") == INT_MIN
    assert partition_for("polygenelubricants") == 0
    assert partition_for("polygenelubricants", behaviours=frozenset({"math-abs-coordinator"})) == -48
    assert utils_abs(INT_MIN) == 0 and java_math_abs(INT_MIN) == INT_MIN


def test_partitions_are_in_range_for_many_ids():
    for i in range(2000):
        p = partition_for(f"group-{i}-é", 7)
        assert 0 <= p < 7


def test_cli_prints_partition(capsys):
    assert cli_main(["coordinator-partition", "polygenelubricants"]) == 0
    assert capsys.readouterr().out.strip() == "0"
    assert cli_main(["coordinator-partition", "polygenelubricants", "--behaviour", "math-abs-coordinator"]) == 0
    assert int(capsys.readouterr().out.strip()) < 0
    assert cli_main(["coordinator-partition", "groupId", "--partitions", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["partition"] == 0 and data["hash"] == java_string_hash("groupId")


def test_cli_bad_input_exits_2(capsys):
    assert cli_main(["coordinator-partition", "g", "--partitions", "-3"]) == 2
    assert cli_main(["coordinator-partition", "g", "--behaviour", "no-such"]) == 2
    assert cli_main(["coordinator-partition", "g", "--behaviour", "truncate-to-hw"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 3
