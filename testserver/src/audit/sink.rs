//! Where events go (kube-apiserver's log backend, `plugin/pkg/audit/log`, in its
//! `json` format): appended to a file one JSON line each, and kept in memory for tests.

use std::{
    fs::{File, OpenOptions},
    io::Write,
};

use parking_lot::Mutex;

use super::{AuditConfig, AuditError, AuditEvent};

/// The file sink's destination.
#[derive(Debug)]
enum LogFile {
    /// `--audit-log-path -`.
    Stdout,
    /// An opened file, appended to.
    File(File),
}

/// The running audit sinks of one server.
#[derive(Debug, Default)]
pub(crate) struct Auditor {
    /// The events so far, when kept in memory.
    memory: Option<Mutex<Vec<AuditEvent>>>,
    /// The JSON-lines log.
    file: Option<Mutex<LogFile>>,
}

impl Auditor {
    /// The sinks `config` asks for; opens (creating, appending to) the log file.
    pub(crate) fn new(config: &AuditConfig) -> Result<Self, AuditError> {
        let file = match &config.log_path {
            None => None,
            Some(path) if path.as_os_str() == "-" => Some(Mutex::new(LogFile::Stdout)),
            Some(path) => {
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| AuditError::Open {
                        path: path.clone(),
                        source,
                    })?;
                Some(Mutex::new(LogFile::File(file)))
            }
        };
        Ok(Auditor {
            memory: config.memory.then(Mutex::default),
            file,
        })
    }

    /// Whether requests are audited.
    #[inline]
    pub(crate) fn enabled(&self) -> bool {
        self.memory.is_some() || self.file.is_some()
    }

    /// Writes one event to every sink. A failed write is logged, and the request goes
    /// on (kube-apiserver's log backend, in its default blocking mode, does the same).
    pub(crate) fn process(&self, event: AuditEvent) {
        if let Some(file) = &self.file {
            match serde_json::to_vec(&event) {
                Ok(mut line) => {
                    line.push(b'\n');
                    let written = match &mut *file.lock() {
                        LogFile::Stdout => std::io::stdout().lock().write_all(&line),
                        LogFile::File(f) => f.write_all(&line),
                    };
                    if let Err(err) = written {
                        tracing::error!(%err, "writing the audit log");
                    }
                }
                Err(err) => tracing::error!(%err, "encoding an audit event"),
            }
        }
        if let Some(memory) = &self.memory {
            memory.lock().push(event);
        }
    }

    /// The events kept in memory so far, oldest first (empty unless
    /// [`AuditConfig::memory`]).
    pub(crate) fn events(&self) -> Vec<AuditEvent> {
        self.memory
            .as_ref()
            .map(|m| m.lock().clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_file_that_cannot_be_opened_is_an_error() {
        let dir = tempfile::tempdir().expect("dir");
        let config = AuditConfig {
            memory: false,
            log_path: Some(dir.path().join("missing/audit.log")),
        };
        let err = Auditor::new(&config).expect_err("missing directory");
        assert!(err.to_string().contains("missing/audit.log"), "{err}");
    }

    #[test]
    fn off_by_default() {
        let auditor = Auditor::new(&AuditConfig::default()).expect("auditor");
        assert!(!auditor.enabled());
        auditor.process(AuditEvent::received(crate::audit::micro_now()));
        assert!(auditor.events().is_empty());
    }

    #[test]
    fn events_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("audit.log");
        std::fs::write(&path, "").expect("create");
        let config = AuditConfig {
            memory: true,
            log_path: Some(path.clone()),
        };
        let auditor = Auditor::new(&config).expect("auditor");
        auditor.process(AuditEvent::received(crate::audit::micro_now()));
        auditor.process(AuditEvent::received(crate::audit::micro_now()));
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<AuditEvent> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("event"))
            .collect();
        assert_eq!(lines, auditor.events());
        assert_eq!(lines.len(), 2);
    }
}
