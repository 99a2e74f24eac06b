"""The storage kernel (L0): standard library only; the only package hooks may import."""
