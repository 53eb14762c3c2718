//! The project's files as templates (`templates/*.tmpl`, compiled in with `include_str!`),
//! filled by plain substitution of `{{name}}` placeholders: no template engine, nothing
//! conditional. What varies by dependency mode is substituted whole
//! ([`Dependencies::cargo_lines`](super::Dependencies::cargo_lines),
//! [`Dependencies::codegen_command`](super::Dependencies::codegen_command)).

use super::{ApiKind, Dependencies, ProjectName};

/// One template: its text and the placeholders it may use.
#[derive(Clone, Copy, Debug)]
pub struct Template {
    /// The template's file name under `templates/` (for messages and tests).
    pub name: &'static str,
    /// The text, with `{{placeholder}}`s.
    pub text: &'static str,
}

macro_rules! template {
    ($ident:ident, $file:literal) => {
        #[doc = concat!("`templates/", $file, "`.")]
        pub const $ident: Template = Template {
            name: $file,
            text: include_str!(concat!("templates/", $file)),
        };
    };
}

template!(CARGO_TOML, "Cargo.toml.tmpl");
template!(README, "README.md.tmpl");
template!(DOCKERFILE, "Dockerfile.tmpl");
template!(DOCKERIGNORE, "dockerignore.tmpl");
template!(GITIGNORE, "gitignore.tmpl");
template!(BOILERPLATE, "boilerplate.txt.tmpl");
template!(UPDATE_CODEGEN, "update-codegen.sh.tmpl");
template!(VERIFY_CODEGEN, "verify-codegen.sh.tmpl");
template!(MAIN_RS, "main.rs.tmpl");
template!(EMBEDDED_RS, "embedded.rs.tmpl");
template!(LIB_RS, "lib.rs.tmpl");
template!(MANAGER_RS, "manager.rs.tmpl");
template!(METRICS_AUTH_ROLE, "metrics_auth_role.yaml.tmpl");
template!(
    METRICS_AUTH_ROLE_BINDING,
    "metrics_auth_role_binding.yaml.tmpl"
);
template!(METRICS_READER_ROLE, "metrics_reader_role.yaml.tmpl");
template!(KIND_TYPES, "kind_types.rs.tmpl");
template!(KIND_CONTROLLER, "kind_controller.rs.tmpl");
template!(KIND_DEMO, "kind_demo.rs.tmpl");
template!(KIND_WEBHOOK, "kind_webhook.rs.tmpl");
template!(KIND_WEBHOOK_DEFAULTER, "kind_webhook_defaulter.rs.tmpl");
template!(KIND_WEBHOOK_VALIDATOR, "kind_webhook_validator.rs.tmpl");
template!(KIND_WEBHOOK_TEST, "kind_webhook_test.rs.tmpl");
template!(
    KIND_WEBHOOK_DEFAULTER_TEST,
    "kind_webhook_defaulter_test.rs.tmpl"
);
template!(
    KIND_WEBHOOK_VALIDATOR_TEST,
    "kind_webhook_validator_test.rs.tmpl"
);
template!(KIND_CONVERSION, "kind_conversion.rs.tmpl");

/// Every template (for tests: each is filled without a placeholder left over).
pub const ALL: &[Template] = &[
    CARGO_TOML,
    README,
    DOCKERFILE,
    DOCKERIGNORE,
    GITIGNORE,
    BOILERPLATE,
    UPDATE_CODEGEN,
    VERIFY_CODEGEN,
    MAIN_RS,
    EMBEDDED_RS,
    LIB_RS,
    MANAGER_RS,
    METRICS_AUTH_ROLE,
    METRICS_AUTH_ROLE_BINDING,
    METRICS_READER_ROLE,
    KIND_TYPES,
    KIND_CONTROLLER,
    KIND_DEMO,
    KIND_WEBHOOK,
    KIND_WEBHOOK_DEFAULTER,
    KIND_WEBHOOK_VALIDATOR,
    KIND_WEBHOOK_TEST,
    KIND_WEBHOOK_DEFAULTER_TEST,
    KIND_WEBHOOK_VALIDATOR_TEST,
    KIND_CONVERSION,
];

/// The values of the placeholders.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    pairs: Vec<(&'static str, String)>,
}

impl Vars {
    /// The project's placeholders: `{{project}}`, `{{crate}}`, `{{kubegen_deps}}`,
    /// `{{kubegen_demo_deps}}`, `{{kubegen_dev_deps}}`, `{{codegen_command}}`, and the first kind's (for the README).
    pub fn project(project: &ProjectName, deps: &Dependencies, first: &ApiKind) -> Self {
        let mut vars = Self::kind(project, first);
        vars.pairs.push(("kubegen_deps", deps.cargo_lines()));
        vars.pairs
            .push(("kubegen_demo_deps", deps.demo_cargo_lines()));
        vars.pairs
            .push(("kubegen_dev_deps", deps.dev_cargo_lines()));
        vars.pairs.push(("codegen_command", deps.codegen_command()));
        vars
    }

    /// A kind's placeholders: `{{project}}`, `{{crate}}`, `{{group}}`, `{{group_mod}}`,
    /// `{{version}}`, `{{Kind}}`, `{{kind}}` (its module), `{{kind_dns}}` (the
    /// module as a DNS label), `{{kind_flat}}` (lower case, kubebuilder's webhook names),
    /// `{{plural}}`.
    pub fn kind(project: &ProjectName, kind: &ApiKind) -> Self {
        Self {
            pairs: vec![
                ("project", project.package.clone()),
                ("crate", project.krate.clone()),
                ("group_mod", kind.group_mod.clone()),
                ("group", kind.group.clone()),
                ("version", kind.version.clone()),
                ("Kind", kind.kind.clone()),
                ("kind", kind.kind_mod.clone()),
                ("kind_dns", kind.kind_mod.replace('_', "-")),
                ("kind_flat", kind.kind.to_lowercase()),
                ("plural", kind.plural.clone()),
            ],
        }
    }

    /// These values and `name` = `value`, replacing an earlier value (a placeholder of one template family, such as
    /// `create-webhook`'s `{{webhook_markers}}`).
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.pairs.retain(|(n, _)| *n != name);
        self.pairs.push((name, value.into()));
        self
    }

    /// `template` with every `{{name}}` of these values replaced.
    pub fn fill(&self, template: &Template) -> String {
        let mut text = template.text.to_owned();
        for (name, value) in &self.pairs {
            text = text.replace(&format!("{{{{{name}}}}}"), value);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_of_every_template_is_filled() {
        let project = ProjectName::new("my-operator").expect("name");
        let kind = ApiKind::new("example.com", "v1alpha1", "Widget").expect("kind");
        for deps in [
            Dependencies::Version("0.1.0".into()),
            Dependencies::Path("/src/kubegen".into()),
        ] {
            let vars = Vars::project(&project, &deps, &kind)
                .with("webhook_summary", "s")
                .with("webhook_markers", "//! m")
                .with("webhook_imports", "Validator")
                .with("hub", "v1");
            for template in ALL {
                let text = vars.fill(template);
                assert!(
                    !text.contains("{{"),
                    "{} leaves a placeholder:\n{text}",
                    template.name
                );
            }
        }
    }
}
