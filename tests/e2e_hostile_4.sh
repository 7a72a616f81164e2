#!/bin/bash
# e2e_hostile_4.sh - group 4 of the adversary suite's cases
# (tests/e2e_hostile.sh, HOSTILE_GROUPS there says which cases).
HOSTILE_GROUP=4 exec bash "$(dirname "$0")/e2e_hostile.sh"
