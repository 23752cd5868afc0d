"""The gem5 backend: a run from a boot checkpoint, in checkpointed segments that a
killed run resumes from, with the checkpoint fixes every restore needs."""
