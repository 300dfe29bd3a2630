"""Scenarios, the recorder, and the DeepSeek emulator that plays them. Imports only ``sessions`` (DESIGN §2)."""
