//! `kubegen-codegen --help` and every subcommand's `--help` end with an example
//! invocation of that command (issue 25: found by running the README as printed).

use std::process::Command;

/// The subcommands the top-level help lists (clap's `Commands:` section), `help` aside.
fn subcommands() -> Vec<String> {
    let text = help(&[]);
    let section = text
        .split_once("Commands:\n")
        .expect("a Commands: section")
        .1;
    section
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_kubegen-codegen"))
        .args(args)
        .arg("--help")
        .output()
        .expect("run kubegen-codegen");
    assert!(
        output.status.success(),
        "{args:?} --help: {}",
        output.status
    );
    String::from_utf8(output.stdout).expect("UTF-8 help")
}

#[test]
fn the_top_level_help_shows_examples() {
    let text = help(&[]);
    assert!(
        text.contains("Examples:\n  kubegen-codegen init --name"),
        "{text}"
    );
    let listed = subcommands();
    for sub in [
        "update",
        "verify",
        "crd",
        "rbac",
        "import-crd",
        "init",
        "create-api",
        "webhook",
        "create-webhook",
    ] {
        assert!(
            listed.iter().any(|s| s == sub),
            "{sub} not listed: {listed:?}"
        );
    }
}

#[test]
fn every_subcommand_help_shows_an_example_of_itself() {
    for sub in subcommands() {
        let text = help(&[&sub]);
        let example = text
            .split_once("Example")
            .unwrap_or_else(|| panic!("{sub} --help has no example:\n{text}"))
            .1;
        assert!(
            example.contains(&format!("kubegen-codegen {sub} --")),
            "{sub} --help's example does not run {sub}:\n{text}"
        );
    }
}
