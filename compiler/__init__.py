"""The Rz compiler."""
