"""python_dist_info.py PYPROJECT SITEDIR: the plugin's installed metadata, from its pyproject.toml.

What pip would write beside a package in SITEDIR (NAME-VERSION.dist-info: METADATA and
entry_points.txt), so that importlib.metadata, and through it pytest, finds the
plugin's pytest11 entry point. No RECORD: the files belong to the system package manager, which
is how Debian's own Python packages ship their dist-info.
"""

import os
import re
import sys
import tomllib


def main(pyproject: str, sitedir: str) -> None:
    with open(pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    name, version = project["name"], project["version"]
    # the file name's form of the project name (the packaging specification's normalization)
    stem = re.sub(r"[-_.]+", "_", name).lower()
    info = os.path.join(sitedir, f"{stem}-{version}.dist-info")
    os.makedirs(info, exist_ok=True)

    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {project['description']}"]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    write(info, "METADATA", "\n".join(lines) + "\n")

    groups = project.get("entry-points", {})
    text = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n" for group, entries in groups.items())
    write(info, "entry_points.txt", text)



def write(directory: str, name: str, text: str) -> None:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python_dist_info.py PYPROJECT SITEDIR")
    main(sys.argv[1], sys.argv[2])
