//! Renders a kubeconfig file pointing at a test server.

/// A kubeconfig with one cluster `kubegen-testserver`, one user and one current context.
///
/// `ca_pem` (for TLS) goes in base64 as `certificate-authority-data`.
pub fn render(url: &str, token: Option<&str>, ca_pem: Option<&str>) -> String {
    use base64::Engine as _;
    let mut cluster = format!("    server: {url}\n");
    if let Some(ca) = ca_pem {
        let data = base64::engine::general_purpose::STANDARD.encode(ca);
        cluster.push_str(&format!("    certificate-authority-data: {data}\n"));
    }
    let user = match token {
        Some(t) => format!("    token: {t}\n"),
        None => "    {}\n".to_string(),
    };
    let user = if token.is_none() {
        "  user: {}\n".to_string()
    } else {
        format!("  user:\n{user}")
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kubegen-testserver\n  cluster:\n{cluster}users:\n- name: kubegen-testserver\n{user}contexts:\n- name: kubegen-testserver\n  context:\n    cluster: kubegen-testserver\n    user: kubegen-testserver\n    namespace: default\ncurrent-context: kubegen-testserver\npreferences: {{}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_names_server_and_token() {
        let k = render("http://127.0.0.1:1", Some("abc"), Some("PEM"));
        assert!(k.contains("server: http://127.0.0.1:1"));
        assert!(k.contains("token: abc"));
        assert!(k.contains("certificate-authority-data: UEVN"));
        let plain = render("http://x", None, None);
        assert!(plain.contains("user: {}"));
    }
}
