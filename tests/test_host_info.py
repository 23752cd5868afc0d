"""A run records which processor made it, finely enough to tell two machines apart
when the VM names both just "AMD EPYC"."""

from reclaimstudy.campaigns import runs

TWO_CORES = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
stepping\t: 1
cpu MHz\t\t: 2596.136

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 49
model name\t: AMD EPYC 7B12
stepping\t: 0
cpu MHz\t\t: 2249.998
"""


def test_the_first_processors_fields_are_read(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(TWO_CORES)
    assert runs.cpu_model(cpuinfo) == "AMD EPYC"
    assert runs.cpu_signature(cpuinfo) == "AuthenticAMD family 25 model 17 stepping 1"
    assert runs.cpu_mhz(cpuinfo) == 2596


def test_same_name_different_generation_differs_by_signature(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text(TWO_CORES)
    b.write_text(TWO_CORES.replace("cpu family\t: 25\nmodel\t\t: 17",
                                   "cpu family\t: 23\nmodel\t\t: 49", 1))
    assert runs.cpu_model(a) == runs.cpu_model(b)
    assert runs.cpu_signature(a) != runs.cpu_signature(b)


def test_missing_or_unusual_cpuinfo_gives_none_not_an_error(tmp_path):
    missing = tmp_path / "absent"
    assert runs.cpu_signature(missing) is None and runs.cpu_mhz(missing) is None
    assert runs.cpu_model(missing)  # the platform's name, or "unknown"
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n")
    assert runs.cpu_signature(arm) is None and runs.cpu_mhz(arm) is None


def test_host_info_carries_the_signature():
    info = runs.host_info()
    assert set(info) >= {"cpu_model", "cpu_signature", "cpu_mhz"}
    assert info["cpu_signature"] == runs.cpu_signature()
