"""Capture: turning a run's transcript into conversation drafts.

Agents rarely write down what a run taught them, so memory that waits for
explicit `memory_remember` calls stays empty. `memory_capture` reads the
transcript or final report instead and proposes drafts from it; each one
goes through the ordinary remember path (scan, dedup, caps).
"""
