"""The artefacts a run is made of, built from source and cached by content: the guest
kernel, the disk images, gem5 with our patches and the device simulators linked into it
(DiskSim), and what makes their bytes the same wherever they are built."""
