# Sourced by the checkpoint benches: make_big_repo DIR FILES makes a git repository of
# FILES small text files in folders of 100, committed once (gc off).
make_big_repo() {
  python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:04}")
    if i % 100 == 0:
        os.makedirs(d)
    with open(os.path.join(d, f"f{i}.txt"), "w") as f:
        f.write(f"file {i}\nsome text line\n")
PY
  ( cd "$1" && git init -q && git config gc.auto 0 && git add -A && git -c user.name=b -c user.email=b@b commit -qm base )
}
