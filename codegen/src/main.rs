//! `kubegen-codegen`: generate (`update`) or check (`verify`) the code for an API tree.
//!
//! Exit status: 0 on success, 1 when `verify` finds stale, missing or extra files,
//! 2 on errors (printed as `file:line: message`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use kubegen_codegen::crd::files;
use kubegen_codegen::scaffold::{
    CreateApiOptions, CreateWebhookOptions, Dependencies, InitOptions, ScaffoldError, create_api,
    create_webhook, init,
};
use kubegen_codegen::{Config, Error, Generator, PluralExceptions};

#[derive(Parser, Debug)]
#[command(
    name = "kubegen-codegen",
    version,
    about = "client-go's code-generator for Rust: +genclient markers to DeepCopy, Resource impls, clients, listers and informers",
    after_help = "Examples:\n  kubegen-codegen init --name my-operator --group example.com --version v1alpha1 --kind Widget\n  kubegen-codegen update --input-dir src/apis --output-dir src/client --output-module crate::client"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate code into the tree.
    #[command(
        after_help = "Example:\n  kubegen-codegen update --input-dir src/apis --input-module crate::apis \\\n      --output-dir src/client --output-module crate::client --with-fake"
    )]
    Update(Options),
    /// Regenerate into a temporary directory and exit 1 with a diff when the tree is stale.
    #[command(
        after_help = "Example:\n  kubegen-codegen verify --input-dir src/apis --input-module crate::apis \\\n      --output-dir src/client --output-module crate::client --with-fake"
    )]
    Verify(Options),
    /// Write one CustomResourceDefinition per resource as <output-dir>/<group>_<plural>.yaml
    /// (controller-gen's naming), or with --verify exit 1 with a diff when they are stale.
    #[command(
        after_help = "Example:\n  kubegen-codegen crd --input-dir src/apis --output-dir config/crd [--verify]"
    )]
    Crd(CrdOptions),
    /// Write the ClusterRole (and namespaced Roles) of every +kubebuilder:rbac marker in
    /// the .rs files under --input-dir, or with --verify exit 1 with a diff when stale;
    /// with --from-audit print the markers (and their role) that allow the requests an
    /// audit log recorded.
    #[command(
        after_help = "Examples:\n  kubegen-codegen rbac --input-dir src --output config/rbac/role.yaml [--verify]\n  kubegen-codegen rbac --from-audit audit.log [--user system:serviceaccount:ns:op] [--namespace ns]"
    )]
    Rbac(RbacOptions),
    /// Write the MutatingWebhookConfiguration and ValidatingWebhookConfiguration of every
    /// +kubebuilder:webhook marker in the .rs files under --input-dir (controller-gen's
    /// `webhook` generator), or with --verify exit 1 with a diff when stale.
    #[command(
        after_help = "Example:\n  kubegen-codegen webhook --input-dir src --output config/webhook/manifests.yaml [--verify]\n\nMarker (on any item or comment):\n  // +kubebuilder:webhook:path=/validate-example-com-v1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=example.com,resources=widgets,verbs=create;update,versions=v1,name=vwidget-v1.kb.io,admissionReviewVersions=v1"
    )]
    Webhook(WebhookOptions),
    /// Write marked Rust types for every served version of each CRD into
    /// <output-dir>/<group>/<version>/ (then `update` generates their clients), or with
    /// --verify exit 1 with a diff when they are stale.
    #[command(
        after_help = "Example:\n  kubegen-codegen import-crd --crd cert-manager.io_certificates.yaml \\\n      --output-dir src/apis --output-module crate::apis"
    )]
    ImportCrd(ImportOptions),
    /// Scaffold a new operator project (kubebuilder's `init`): types, generated clients,
    /// CRD, RBAC, a reconciler under the manager, a demo, tests, hack/ scripts.
    #[command(
        after_help = "Example:\n  kubegen-codegen init --name my-operator --group example.com --version v1alpha1 --kind Widget\n  cd my-operator && cargo run --features demo -- --demo && cargo test"
    )]
    Init(InitArgs),
    /// Add another kind to a project made by `init` (kubebuilder's `create api`).
    #[command(
        after_help = "Example (in the project's directory):\n  kubegen-codegen create-api --group example.com --version v1alpha1 --kind Gadget"
    )]
    CreateApi(CreateApiArgs),
    /// Add admission webhooks (a defaulter, a validator) or a conversion webhook for a kind
    /// of a project made by `init` (kubebuilder's `create webhook`): the handler file with
    /// its +kubebuilder:webhook markers and its test, then config/webhook/manifests.yaml.
    #[command(
        after_help = "Examples (in the project's directory):\n  kubegen-codegen create-webhook --kind Widget --defaulting --validation\n  kubegen-codegen create-webhook --kind Widget --conversion   (two or more versions, one +kubebuilder:storageversion)"
    )]
    CreateWebhook(CreateWebhookArgs),
}

#[derive(Args, Debug)]
struct CreateWebhookArgs {
    /// The kind.
    #[arg(long)]
    kind: String,
    /// The kind's API group (when the kind's name is in several groups).
    #[arg(long)]
    group: Option<String>,
    /// The kind's version (when the kind has several).
    #[arg(long)]
    version: Option<String>,
    /// A mutating webhook that fills in defaults (a `kubegen::webhook::Defaulter`).
    #[arg(long)]
    defaulting: bool,
    /// A validating webhook (a `kubegen::webhook::Validator`: create, update, delete).
    #[arg(long)]
    validation: bool,
    /// A conversion webhook: the CRD converts between the kind's versions through the hub
    /// (the version marked +kubebuilder:storageversion).
    #[arg(long)]
    conversion: bool,
    /// The project directory.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct InitArgs {
    /// The project (cargo package and binary) name.
    #[arg(long)]
    name: String,
    /// The first kind's API group.
    #[arg(long)]
    group: String,
    /// The first kind's version.
    #[arg(long)]
    version: String,
    /// The first kind.
    #[arg(long)]
    kind: String,
    /// The project directory (default: ./<name>).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Depend on the kubegen checkout at PATH (default when this binary was built from
    /// a checkout that still exists).
    #[arg(long, value_name = "PATH", conflicts_with = "kubegen_version")]
    kubegen_path: Option<PathBuf>,
    /// Depend on kubegen VERSION from crates.io (default otherwise: this binary's version).
    #[arg(long, value_name = "VERSION")]
    kubegen_version: Option<String>,
}

#[derive(Args, Debug)]
struct CreateApiArgs {
    /// The kind's API group.
    #[arg(long)]
    group: String,
    /// The kind's version.
    #[arg(long)]
    version: String,
    /// The kind.
    #[arg(long)]
    kind: String,
    /// The project directory.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct RbacOptions {
    /// The source directory whose .rs files carry the markers (e.g. src).
    #[arg(long, required_unless_present = "from_audit")]
    input_dir: Option<PathBuf>,
    /// The role file to write (kubebuilder's config/rbac/role.yaml).
    #[arg(long, required_unless_present = "from_audit")]
    output: Option<PathBuf>,
    /// The ClusterRole's name (a marker's roleName overrides it).
    #[arg(long, default_value = kubegen_codegen::rbac::DEFAULT_ROLE_NAME)]
    role_name: String,
    /// Compare instead of writing; exit 1 with a diff when stale.
    #[arg(long)]
    verify: bool,
    /// Print the +kubebuilder:rbac markers, and the role they generate, that allow the
    /// requests of this audit log (JSON lines of audit.k8s.io/v1 Events, e.g.
    /// kube-apiserver's or kubegen-testserver's --audit-log-path), denied ones included.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["input_dir", "output", "verify"])]
    from_audit: Option<PathBuf>,
    /// With --from-audit: only this user's requests (the impersonated user's, when one
    /// is); default: every user not in system:masters.
    #[arg(long, value_name = "NAME", requires = "from_audit")]
    user: Option<String>,
    /// With --from-audit: requests in this namespace become a Role there
    /// (`namespace=NS` markers); the rest stay in the ClusterRole.
    #[arg(long, value_name = "NS", requires = "from_audit")]
    namespace: Option<String>,
}

#[derive(Args, Debug)]
struct WebhookOptions {
    /// The source directory whose .rs files carry the markers (e.g. src).
    #[arg(long)]
    input_dir: PathBuf,
    /// The manifests file to write (kubebuilder's config/webhook/manifests.yaml).
    #[arg(long, default_value = "config/webhook/manifests.yaml")]
    output: PathBuf,
    /// Compare instead of writing; exit 1 with a diff when stale.
    #[arg(long)]
    verify: bool,
}

#[derive(Args, Debug)]
struct ImportOptions {
    /// CRD manifests (YAML, one or more documents each, or JSON).
    #[arg(long, num_args = 1.., required = true)]
    crd: Vec<PathBuf>,
    /// The API tree to write: <output-dir>/<group>/<version>/{mod.rs,types.rs}.
    #[arg(long)]
    output_dir: PathBuf,
    /// The Rust module path of --output-dir (the --input-module of `update`).
    #[arg(long, default_value = "crate::apis")]
    output_module: String,
    /// A header (of `//` comment lines) for every generated file.
    #[arg(long)]
    boilerplate: Option<PathBuf>,
    /// Compare instead of writing; exit 1 with a diff when stale.
    #[arg(long)]
    verify: bool,
}

#[derive(Args, Debug)]
struct CrdOptions {
    /// The apis root: <input-dir>/<group>/<version>/mod.rs.
    #[arg(long)]
    input_dir: PathBuf,
    /// The Rust module path of --input-dir; CRDs do not depend on it (accepted so one
    /// option set serves `update` and `crd`).
    #[arg(long, default_value = "crate::apis")]
    input_module: String,
    /// Where the CRD YAML files go (an entirely generated directory: verify reports any
    /// .yaml file in it that generation would not produce).
    #[arg(long)]
    output_dir: PathBuf,
    /// Compare instead of writing; exit 1 with a diff when stale.
    #[arg(long)]
    verify: bool,
    /// Kind:Plural pairs overriding the pluraliser (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    plural_exceptions: Vec<String>,
}

#[derive(Args, Debug)]
struct Options {
    /// The apis root: <input-dir>/<group>/<version>/mod.rs.
    #[arg(long)]
    input_dir: PathBuf,
    /// Where clientsets, listers and informers are generated (an entirely generated
    /// directory; verify reports any file in it that generation would not produce).
    #[arg(long)]
    output_dir: PathBuf,
    /// The Rust module path of --output-dir (e.g. crate::client).
    #[arg(long)]
    output_module: String,
    /// The Rust module path of --input-dir (generated clients name types as
    /// <input-module>::<group>::<version>::<Type>).
    #[arg(long, default_value = "crate::apis")]
    input_module: String,
    /// A header (of `//` comment lines) for every generated file.
    #[arg(long)]
    boilerplate: Option<PathBuf>,
    /// Also generate fake clientsets (read by the clientset emitter).
    #[arg(long)]
    with_fake: bool,
    /// Also generate apply configurations for server-side apply
    /// (<output-dir>/applyconfiguration/<group>/<version>/, client-go's layout).
    #[arg(long)]
    with_applyconfig: bool,
    /// Put each API group behind a cargo feature of the named crate (the group's module
    /// name; apply configurations: `applyconfig`), for a library shipping many groups.
    #[arg(long, value_name = "CRATE")]
    group_features: Option<String>,
    /// Kind:Plural pairs overriding the pluraliser (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    plural_exceptions: Vec<String>,
}

fn generator(opts: &Options) -> Result<Generator, Error> {
    let mut config = Config::new(&opts.input_dir, &opts.output_dir, &opts.output_module)
        .with_fake(opts.with_fake)
        .with_applyconfig(opts.with_applyconfig)
        .input_module(&opts.input_module);
    if let Some(b) = &opts.boilerplate {
        config = config.boilerplate(b);
    }
    if let Some(krate) = &opts.group_features {
        config = config.group_features(krate);
    }
    for spec in &opts.plural_exceptions {
        config = config.plural_exception(spec)?;
    }
    Generator::new(config)
}

fn crd(opts: &CrdOptions) -> Result<ExitCode, Error> {
    let mut exceptions = PluralExceptions::default();
    for spec in &opts.plural_exceptions {
        exceptions
            .add_spec(spec)
            .map_err(|e| Error::Config(e.to_string()))?;
    }
    if opts.verify {
        let outcome = files::verify(&opts.input_dir, &opts.output_dir, &exceptions)?;
        if outcome.is_up_to_date() {
            eprintln!("{} is up to date.", opts.output_dir.display());
            return Ok(ExitCode::SUCCESS);
        }
        print!("{}", outcome.diff);
        eprintln!(
            "{} CRD file(s) out of date; run hack/update-codegen.sh",
            outcome.differing.len()
        );
        return Ok(ExitCode::from(1));
    }
    let written = files::update(&opts.input_dir, &opts.output_dir, &exceptions)?;
    tracing::info!(files = written.len(), "generated CRDs");
    Ok(ExitCode::SUCCESS)
}

fn rbac_from_audit(opts: &RbacOptions, log: &std::path::Path) -> Result<ExitCode, Error> {
    use kubegen_codegen::rbac::audit::{AuditFilter, from_audit};
    let filter = AuditFilter {
        user: opts.user.clone(),
        namespace: opts.namespace.clone(),
    };
    match from_audit(log, &filter, &opts.role_name)? {
        Some(text) => print!("{text}"),
        None => eprintln!("no requests to learn from in {}", log.display()),
    }
    Ok(ExitCode::SUCCESS)
}

fn rbac(opts: &RbacOptions) -> Result<ExitCode, Error> {
    use kubegen_codegen::rbac::files as rbac_files;
    if let Some(log) = &opts.from_audit {
        return rbac_from_audit(opts, log);
    }
    let (Some(input_dir), Some(output)) = (&opts.input_dir, &opts.output) else {
        return Err(Error::Config(
            "rbac needs --input-dir and --output, or --from-audit".into(),
        ));
    };
    if opts.verify {
        let outcome = rbac_files::verify(input_dir, output, &opts.role_name)?;
        if outcome.is_up_to_date() {
            eprintln!("{} is up to date.", output.display());
            return Ok(ExitCode::SUCCESS);
        }
        print!("{}", outcome.diff);
        eprintln!(
            "{} is out of date; run hack/update-codegen.sh",
            output.display()
        );
        return Ok(ExitCode::from(1));
    }
    if !rbac_files::update(input_dir, output, &opts.role_name)? {
        eprintln!("no +kubebuilder:rbac markers under {}", input_dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn webhook(opts: &WebhookOptions) -> Result<ExitCode, Error> {
    use kubegen_codegen::webhook::files as webhook_files;
    if opts.verify {
        let outcome = webhook_files::verify(&opts.input_dir, &opts.output)?;
        if outcome.is_up_to_date() {
            eprintln!("{} is up to date.", opts.output.display());
            return Ok(ExitCode::SUCCESS);
        }
        print!("{}", outcome.diff);
        eprintln!(
            "{} is out of date; run hack/update-codegen.sh",
            opts.output.display()
        );
        return Ok(ExitCode::from(1));
    }
    if !webhook_files::update(&opts.input_dir, &opts.output)? {
        eprintln!(
            "no +kubebuilder:webhook markers under {}",
            opts.input_dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn import_crd(opts: &ImportOptions) -> Result<ExitCode, Error> {
    use kubegen_codegen::import;
    let boilerplate = match &opts.boilerplate {
        Some(b) => kubegen_codegen::Boilerplate::load(b)?,
        None => kubegen_codegen::Boilerplate::default(),
    };
    let options = import::ImportOptions {
        crds: opts.crd.clone(),
        output_dir: opts.output_dir.clone(),
        output_module: opts.output_module.clone(),
        boilerplate,
    };
    let result = if opts.verify {
        import::tree::verify(&options).map(|(outcome, imported)| (Some(outcome), imported))
    } else {
        import::tree::update(&options).map(|imported| (None, imported))
    };
    let (outcome, imported) = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(2));
        }
    };
    for note in &imported.notes {
        tracing::warn!("{note}");
    }
    match outcome {
        Some(o) if !o.is_up_to_date() => {
            print!("{}", o.diff);
            eprintln!(
                "{} imported file(s) out of date; run hack/update-codegen.sh",
                o.differing.len()
            );
            Ok(ExitCode::from(1))
        }
        Some(_) => {
            eprintln!("{} is up to date.", opts.output_dir.display());
            Ok(ExitCode::SUCCESS)
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

fn scaffold(command: &Command) -> Result<(), ScaffoldError> {
    match command {
        Command::Init(a) => {
            let dependencies = match (&a.kubegen_path, &a.kubegen_version) {
                (Some(path), _) => Dependencies::checkout(path)?,
                (None, Some(version)) => Dependencies::version(version)?,
                (None, None) => Dependencies::from_build(),
            };
            let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from(&a.name));
            let options = InitOptions {
                dir: dir.clone(),
                name: a.name.clone(),
                group: a.group.clone(),
                version: a.version.clone(),
                kind: a.kind.clone(),
                dependencies,
            };
            init(&options)?;
            println!(
                "{}: scaffolded; next: cd {} && cargo run --features demo -- --demo && cargo test",
                a.name,
                dir.display()
            );
        }
        Command::CreateApi(a) => {
            let options = CreateApiOptions {
                dir: a.dir.clone(),
                group: a.group.clone(),
                version: a.version.clone(),
                kind: a.kind.clone(),
            };
            for path in create_api(&options)? {
                println!("wrote {}", path.display());
            }
        }
        Command::CreateWebhook(a) => {
            let options = CreateWebhookOptions {
                dir: a.dir.clone(),
                kind: a.kind.clone(),
                group: a.group.clone(),
                version: a.version.clone(),
                defaulting: a.defaulting,
                validation: a.validation,
                conversion: a.conversion,
            };
            for path in create_webhook(&options)? {
                println!("wrote {}", path.display());
            }
        }
        _ => {}
    }
    Ok(())
}

fn run(cli: &Cli) -> Result<ExitCode, Error> {
    match &cli.command {
        Command::Init(_) | Command::CreateApi(_) | Command::CreateWebhook(_) => {
            match scaffold(&cli.command) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    eprintln!("{e}");
                    Ok(ExitCode::from(2))
                }
            }
        }
        Command::Rbac(opts) => rbac(opts),
        Command::Webhook(opts) => webhook(opts),
        Command::ImportCrd(opts) => import_crd(opts),
        Command::Crd(opts) => crd(opts),
        Command::Update(opts) => {
            let files = generator(opts)?.update()?;
            tracing::info!(files = files.len(), "generated");
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify(opts) => {
            let outcome = generator(opts)?.verify()?;
            if outcome.is_up_to_date() {
                eprintln!("{} is up to date.", opts.input_dir.display());
                Ok(ExitCode::SUCCESS)
            } else {
                print!("{}", outcome.diff);
                eprintln!(
                    "{} file(s) out of date; run hack/update-codegen.sh",
                    outcome.differing.len()
                );
                Ok(ExitCode::from(1))
            }
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        // Colour only on a terminal, and never with NO_COLOR (https://no-color.org).
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(2)
        }
    }
}
