"""Commits, worktrees and builds.

``gitops`` resolves revisions, lists changed files, checks out a worktree per commit and
builds it (as a sandboxed process); ``skipping`` decides which workloads a change cannot
affect from their ``paths:`` globs. Hands on: built checkouts and the workloads to skip.
"""
