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

def _maybe(rule, name, **kwargs):
    if name not in native.existing_rules():
        rule(name = name, **kwargs)

def ggml_whisper_deps():
    """Declares rules_cc, rules_java, platforms, coverage tools and the system libraries."""
    _maybe(_local_rules_cc, "rules_cc")
    _maybe(native.local_repository, "rules_java", path = "/usr/share/bazel/rules/java")
    _maybe(native.local_repository, "platforms", path = "/usr/share/bazel/platforms")
    _maybe(_local_coverage_tools, "remote_coverage_tools")
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
