//! How a scaffolded project depends on kubegen: by path on a kubegen checkout (the default
//! when `kubegen-codegen` runs from one), or by version from crates.io. The choice decides
//! the project's `[dependencies]` and how its `hack/update-codegen.sh` finds the generator.

use std::path::{Path, PathBuf};

use super::ScaffoldError;

/// Where the project's kubegen crates come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dependencies {
    /// A kubegen checkout (its root: `runtime/`, `testserver/`, `codegen/` inside).
    /// `hack/update-codegen.sh` runs the generator with `cargo run --manifest-path`.
    Path(PathBuf),
    /// A crates.io version requirement (`0.1.0`). `hack/update-codegen.sh` runs the
    /// `kubegen-codegen` on `PATH`, and says how to install it when it is missing.
    Version(String),
}

impl Dependencies {
    /// The checkout this binary was built from when it still exists (a `runtime/`
    /// package named `kubegen` beside `codegen/`), else this binary's own version.
    pub fn from_build() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        match Self::checkout(&root) {
            Ok(Self::Path(root)) => Self::Path(root),
            _ => Self::Version(env!("CARGO_PKG_VERSION").to_owned()),
        }
    }

    /// Path dependencies on the kubegen checkout at `root` (checked, made absolute).
    pub fn checkout(root: &Path) -> Result<Self, ScaffoldError> {
        let what = "--kubegen-path";
        let invalid = |reason: &str| ScaffoldError::InvalidName {
            what,
            value: root.display().to_string(),
            reason: reason.to_owned(),
        };
        let manifest = root.join("runtime").join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|_| invalid("not a kubegen checkout (no runtime/Cargo.toml)"))?;
        if !text.lines().any(|l| l.trim() == "name = \"kubegen\"") {
            return Err(invalid("runtime/Cargo.toml is not the kubegen crate"));
        }
        let root = std::fs::canonicalize(root).map_err(|e| ScaffoldError::io(root, e))?;
        let text = root.to_str().ok_or_else(|| invalid("not valid UTF-8"))?;
        // The path goes into a TOML string and a double-quoted shell word, unescaped.
        if text.contains(['"', '\\', '$', '`', '\n']) {
            return Err(invalid("contains a quote, backslash, $ or backquote"));
        }
        Ok(Self::Path(root))
    }

    /// A version requirement, checked to be `MAJOR.MINOR.PATCH` (or a prefix of it).
    pub fn version(version: &str) -> Result<Self, ScaffoldError> {
        let ok = !version.is_empty()
            && version.split('.').count() <= 3
            && version
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        if ok {
            Ok(Self::Version(version.to_owned()))
        } else {
            Err(ScaffoldError::InvalidName {
                what: "--kubegen-version",
                value: version.to_owned(),
                reason: "want a version such as 0.1.0".into(),
            })
        }
    }

    /// The project's kubegen `[dependencies]` lines: the runtime only, without its
    /// default features (the built-in API groups' generated clients and the derives: the
    /// operator uses neither; turn them on by name when it does), with `secure-metrics`
    /// (the manager serves `/metrics` over HTTPS behind TokenReview and
    /// SubjectAccessReview, as kubebuilder scaffolds it). The test server is a
    /// dev-dependency ([`Self::dev_cargo_lines`]): a production build never compiles it.
    pub fn cargo_lines(&self) -> String {
        let features = "default-features = false, features = [\"secure-metrics\"]";
        let comment = "# The operator reaches built-in kinds through kubegen's generic clients and informers.\n\
                       # The typed clientset of a built-in group is a feature named after it:\n\
                       # `features = [\"apps\"]` for `Clientset::new(client).apps_v1()`.\n\
                       # `secure-metrics`: /metrics over HTTPS, authenticated and authorized by the API server.";
        match self {
            Self::Path(root) => {
                let root = root.display();
                format!("{comment}\nkubegen = {{ path = \"{root}/runtime\", {features} }}")
            }
            Self::Version(v) => {
                format!("{comment}\nkubegen = {{ version = \"{v}\", {features} }}")
            }
        }
    }

    /// The test server as an optional `[dependencies]` line: the `demo` feature's embedded
    /// API server (`cargo run --features demo -- --demo`). A production build, without the
    /// feature, never compiles it.
    pub fn demo_cargo_lines(&self) -> String {
        self.testserver(", optional = true")
    }

    /// The project's kubegen `[dev-dependencies]` lines: the embedded API server of the
    /// tests.
    pub fn dev_cargo_lines(&self) -> String {
        self.testserver("")
    }

    /// The test server's dependency line, `more` appended inside its table.
    fn testserver(&self, more: &str) -> String {
        match self {
            Self::Path(root) => format!(
                "kubegen-testserver = {{ path = \"{}/testserver\"{more} }}",
                root.display()
            ),
            Self::Version(v) => format!("kubegen-testserver = {{ version = \"{v}\"{more} }}"),
        }
    }

    /// The `codegen` shell function of `hack/update-codegen.sh`.
    pub fn codegen_command(&self) -> String {
        match self {
            Self::Path(root) => format!(
                "# kubegen-codegen from the kubegen checkout this project depends on.\n\
                 codegen() {{\n  \
                 cargo run --quiet --manifest-path \"{}/Cargo.toml\" -p kubegen-codegen --bin kubegen-codegen -- \"$@\"\n\
                 }}",
                root.display()
            ),
            Self::Version(v) => format!(
                "# kubegen-codegen {v} on PATH (or KUBEGEN_CODEGEN=/path/to/kubegen-codegen).\n\
                 KUBEGEN_CODEGEN=\"${{KUBEGEN_CODEGEN:-kubegen-codegen}}\"\n\
                 if ! command -v \"${{KUBEGEN_CODEGEN}}\" >/dev/null 2>&1; then\n  \
                 echo \"kubegen-codegen not found; install it: cargo install kubegen-codegen --version {v} --locked\" >&2\n  \
                 exit 2\n\
                 fi\n\
                 codegen() {{\n  \
                 \"${{KUBEGEN_CODEGEN}}\" \"$@\"\n\
                 }}"
            ),
        }
    }
}
