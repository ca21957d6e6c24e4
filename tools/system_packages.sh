#!/usr/bin/env sh
# The Debian/Ubuntu packages lang_pz's tests use beside PyPI: bubblewrap and libseccomp2 (the code
# sandbox of the code tasks, lang_pz/tasks/sandbox) and chromium-headless-shell (the viewer's browser
# tests). Installed with apt-get where this user may (root, or sudo without a password); otherwise
# the command to run is printed and the tests that need a missing package are skipped with that reason.
# Never fails: `make install` goes on without them.
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
{ ldconfig -p 2>/dev/null | grep -q libseccomp.so.2; } || missing="$missing libseccomp2"
[ -x /usr/bin/chromium-headless-shell ] || missing="$missing chromium-headless-shell"
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system packages missing:$missing (no apt-get here: install them with your package manager;" \
         "without them the code-sandbox and browser tests are skipped)"
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo -n"
else
    echo "system packages missing:$missing. Install them with: sudo apt-get install -y$missing" \
         "(until then the tests that need them are skipped, and code tasks need sandbox='rlimits')"
    exit 0
fi
echo "installing system packages:$missing (apt-get)"
# shellcheck disable=SC2086
$as_root apt-get install -y -qq $missing >/dev/null 2>&1 \
    || { $as_root apt-get update -qq >/dev/null 2>&1 && $as_root apt-get install -y -qq $missing >/dev/null 2>&1; } \
    || echo "apt-get could not install:$missing (the tests that need them are skipped)"
exit 0
