"""Unit tests of transcribe_ray.py's input listing, part files and de-duplication (no Ray cluster:
tools/batch/test_ray.sh runs the job itself)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transcribe_ray  # noqa: E402


class ListInputsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.dir, "audio", "sub"))
        for name in ("audio/b.wav", "audio/a.FLAC", "audio/sub/c.mp3", "audio/notes.txt"):
            open(os.path.join(self.dir, name), "wb").close()

    def test_directory_lists_audio_files_recursively_sorted(self):
        got = transcribe_ray.list_inputs(os.path.join(self.dir, "audio"), "path")
        self.assertEqual([os.path.relpath(p, self.dir) for p in got], ["audio/a.FLAC", "audio/b.wav", "audio/sub/c.mp3"])

    def test_manifests_resolve_relative_paths_against_their_folder(self):
        want = [os.path.join(self.dir, "audio", "b.wav"), "/abs/x.wav"]
        with open(os.path.join(self.dir, "m.csv"), "w") as f:
            f.write("id,file\n1,audio/b.wav\n2,/abs/x.wav\n")
        self.assertEqual(transcribe_ray.list_inputs(os.path.join(self.dir, "m.csv"), "file"), want)
        with open(os.path.join(self.dir, "m.jsonl"), "w") as f:
            f.write('{"path": "audio/b.wav"}\n\n{"path": "/abs/x.wav"}\n')
        self.assertEqual(transcribe_ray.list_inputs(os.path.join(self.dir, "m.jsonl"), "path"), want)
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.table({"path": ["audio/b.wav", "/abs/x.wav"]}), os.path.join(self.dir, "m.parquet"))
        self.assertEqual(transcribe_ray.list_inputs(os.path.join(self.dir, "m.parquet"), "path"), want)

    def test_manifest_without_the_column_exits_with_its_name(self):
        with open(os.path.join(self.dir, "m.csv"), "w") as f:
            f.write("file\naudio/b.wav\n")
        with self.assertRaises(SystemExit) as e:
            transcribe_ray.list_inputs(os.path.join(self.dir, "m.csv"), "path")
        self.assertIn("row 1 has no 'path'", str(e.exception))


class PartsTest(unittest.TestCase):
    def test_parts_round_trip_and_duplicates_are_removed(self):
        out = tempfile.mkdtemp()
        row = lambda p: {"path": p, "duration": 1.0, "language": "en",
                         "segments": [{"start": 0.0, "end": 1.0, "text": " hi"}], "text": " hi", "error": None}
        transcribe_ray._write_part(os.path.join(out, "part-a.jsonl"), [row("/x"), row("/y")])
        transcribe_ray._write_part(os.path.join(out, "part-b.parquet"), [row("/y"), row("/z")])
        transcribe_ray._write_part(os.path.join(out, "part-c.jsonl"), [row("/x")])
        open(os.path.join(out, "part-d.jsonl.123.tmp"), "w").write("{broken")  # an unfinished part
        self.assertEqual(transcribe_ray.deduplicate(out), 2)
        rows = [r for rows in transcribe_ray.read_parts(out).values() for r in rows]
        self.assertEqual(sorted(r["path"] for r in rows), ["/x", "/y", "/z"])
        self.assertFalse(os.path.exists(os.path.join(out, "part-c.jsonl")))
        self.assertEqual(rows[0]["segments"], [{"start": 0.0, "end": 1.0, "text": " hi"}])


if __name__ == "__main__":
    unittest.main()
