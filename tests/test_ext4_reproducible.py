"""The root file system is the same bytes for the same contents, whenever it is made:
its inodes' times do not come from the host (when the tree was unpacked, when a file
was last read), and the guest sees every file as read just before boot."""

import hashlib
import os
import subprocess
import time

from reclaimstudy.ext4 import make_ext4
from reclaimstudy.reproducible import ATIME, EPOCH


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
