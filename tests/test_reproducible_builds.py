"""What goes into the guest is the same bytes whenever and wherever it is made: the root
file system's inode times do not come from the host (when the tree was unpacked, when a
file was last read), the guest sees every file as read just before boot, and the
generated applications hold no temporary file's name."""

import hashlib
import os
import subprocess
import time

from reclaimstudy.artefacts.ext4 import make_ext4
from reclaimstudy.artefacts.reproducible import ATIME, EPOCH
from reclaimstudy.paths import REPO


def tree_of(root):
    (root / "usr/lib").mkdir(parents=True)
    (root / "usr/lib/data").write_bytes(os.urandom(64 << 10))
    (root / "usr/lib/name with space").write_text("x")
    (root / "etc").mkdir()
    (root / "etc/link").symlink_to("../usr/lib/data")
    return root


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_same_tree_gives_the_same_image_later_and_after_reads(tmp_path):
    tree = tree_of(tmp_path / "tree")
    first = make_ext4(tree, tmp_path / "a.img", 16)
    time.sleep(1.1)  # a later second: host change and access times move
    (tree / "usr/lib/data").read_bytes()
    os.utime(tree / "etc", (time.time(), time.time()))
    second = make_ext4(tree, tmp_path / "b.img", 16)
    assert sha(first) == sha(second)


def test_every_inode_was_changed_at_the_epoch_and_read_a_minute_later(tmp_path):
    image = make_ext4(tree_of(tmp_path / "tree"), tmp_path / "a.img", 16)
    for name in ("/", "/usr/lib/data", '"/usr/lib/name with space"', "/etc/link"):
        shown = subprocess.run(["debugfs", "-R", f"stat {name}", str(image)],
                               capture_output=True, text=True).stdout
        times = {line.split(":")[0].strip(): int(line.split()[1].split(":")[0], 16)
                 for line in shown.splitlines()
                 if line.strip().split(":")[0] in ("ctime", "atime", "mtime", "crtime")}
        assert times == {"ctime": EPOCH, "atime": ATIME, "mtime": EPOCH, "crtime": EPOCH}, name


def test_a_generated_application_is_the_same_bytes_built_twice(tmp_path):
    make_app = REPO / "workloads" / "lib" / "make-app"
    built = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        subprocess.run([make_app, tmp_path / name / "app", "8", "16"], check=True)
        built.append((sha(tmp_path / name / "app"), sha(tmp_path / name / "libtoolkit.so")))
    assert built[0] == built[1]
