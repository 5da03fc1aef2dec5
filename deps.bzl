"""Declares every external repository this project needs, all resolved locally.

Consumers call `ggml_whisper_deps()` from their own WORKSPACE after a `local_repository`
(or other) rule named `ggml_whisper` that points at this repo:

    local_repository(name = "ggml_whisper", path = "/path/to/ggml_whisper")
    load("@ggml_whisper//:deps.bzl", "ggml_whisper_deps")
    ggml_whisper_deps()

Why each one is local (Debian bookworm packages, installed by tools/setup.sh):
  - rules_cc: Debian's bazel-rules-cc 0.0.4 needs a newer Bazel than bazel-bootstrap 4.2.3
    (`use_cpp_toolchain`), so a generated repository forwards cc rules to the native ones.
  - rules_java, platforms: Debian's bazel-rules-java and bazel-platforms.
  - remote_coverage_tools: every cc_test references it; two empty filegroups satisfy it.
  - Abseil, GoogleTest, Google Benchmark, Highway: Debian -dev packages under /usr, exposed
    under the repository names Bazel users expect.
  - python_headers: the headers of the Python that runs the bindings ($PYTHON_BIN_PATH or
    python3 on PATH), found with sysconfig, for //python's extension module.
"""

_RULES_CC_DEFS = """\
\"\"\"Forwards rules_cc's public rules to Bazel's native ones (Bazel 4.2.3 has them all).\"\"\"

def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)
"""

def _rules_cc_impl(rctx):
    rctx.file("WORKSPACE", "workspace(name = \"rules_cc\")\n")
    rctx.file("BUILD", "")
    rctx.file("cc/BUILD", "exports_files([\"defs.bzl\"])\n")
    rctx.file("cc/defs.bzl", _RULES_CC_DEFS)

_local_rules_cc = repository_rule(implementation = _rules_cc_impl, local = True)

def _coverage_tools_impl(rctx):
    rctx.file("WORKSPACE", "workspace(name = \"remote_coverage_tools\")\n")
    rctx.file("BUILD", "\n".join([
        "package(default_visibility = [\"//visibility:public\"])",
        "filegroup(name = \"coverage_report_generator\", srcs = [])",
        "filegroup(name = \"lcov_merger\", srcs = [])",
        "",
    ]))

_local_coverage_tools = repository_rule(implementation = _coverage_tools_impl, local = True)

def _python_headers_impl(rctx):
    # The Python that will import the extension module: $PYTHON_BIN_PATH, else python3 on PATH.
    python = rctx.os.environ.get("PYTHON_BIN_PATH") or rctx.which("python3")
    include = ""
    suffix = ".so"
    if python:
        r = rctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include']); " +
                                        "print(sysconfig.get_config_var('EXT_SUFFIX'))"])
        if r.return_code == 0:
            lines = r.stdout.strip().split("\n")
            include, suffix = lines[0], lines[1]
    if include and rctx.path(include + "/Python.h").exists:
        rctx.symlink(include, "include")
        hdrs = "glob([\"include/**/*.h\"])"
    else:
        hdrs = "[]"  # building //python then fails on a missing Python.h, naming it
    rctx.file("WORKSPACE", "workspace(name = \"python_headers\")\n")
    rctx.file("BUILD", "\n".join([
        "# Python headers (%s), for extension modules; the ABI suffix is in ext_suffix.bzl." % include,
        "cc_library(name = \"python_headers\", hdrs = %s, includes = [\"include\"], visibility = [\"//visibility:public\"])" % hdrs,
        "",
    ]))
    rctx.file("ext_suffix.bzl", "EXT_SUFFIX = \"%s\"\n" % suffix)

_python_headers = repository_rule(
    implementation = _python_headers_impl,
    environ = ["PYTHON_BIN_PATH", "PATH"],
    local = True,
)

def _maybe(rule, name, **kwargs):
    if name not in native.existing_rules():
        rule(name = name, **kwargs)

def ggml_whisper_deps():
    """Declares rules_cc, rules_java, platforms, coverage tools and the system libraries."""
    _maybe(_local_rules_cc, "rules_cc")
    _maybe(native.local_repository, "rules_java", path = "/usr/share/bazel/rules/java")
    _maybe(native.local_repository, "platforms", path = "/usr/share/bazel/platforms")
    _maybe(_local_coverage_tools, "remote_coverage_tools")
    _maybe(_python_headers, "python_headers")
    for name, build in [
        ("com_google_absl", "absl.BUILD"),
        ("com_google_googletest", "googletest.BUILD"),
        ("com_github_google_benchmark", "benchmark.BUILD"),
        ("com_github_google_highway", "highway.BUILD"),
        ("system_libs", "system_libs.BUILD"),
    ]:
        _maybe(
            native.new_local_repository,
            name,
            path = "/usr",
            build_file = "@ggml_whisper//third_party:" + build,
        )
