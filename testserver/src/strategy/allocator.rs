//! Range allocators for what a Service reserves on create: its cluster IP
//! (`pkg/registry/core/service/ipallocator`) and its node ports
//! (`pkg/registry/core/service/portallocator`).
//!
//! Both split their range into a lower *static* band, which a dynamic allocation only uses
//! once the upper band is full, and an upper *dynamic* band (KEP-3070 for cluster IPs,
//! KEP-3668 for node ports): users who pick an address by hand pick it low and rarely
//! collide with the server's choices. Unlike kube-apiserver, which picks at random inside a
//! band, the first free value is taken, so tests see the same addresses every run.

use std::{collections::BTreeSet, net::Ipv4Addr};

use parking_lot::Mutex;
use thiserror::Error;

/// Why a value could not be reserved. The messages are kube-apiserver's.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AllocError {
    /// The value lies outside the range.
    #[error("provided {what} is not in the valid range. The range of valid {what}s is {range}")]
    NotInRange {
        /// `IP` or `port`.
        what: &'static str,
        /// The range, as the server's flag spells it.
        range: String,
    },
    /// Another object holds the value.
    #[error("provided {what} is already allocated")]
    Allocated {
        /// `IP` or `port`.
        what: &'static str,
    },
    /// Every value of the range is taken.
    #[error("range is full")]
    Full,
}

/// Offsets `0..size` of a range, of which the lowest `static_band` are only handed out
/// dynamically when the rest is taken.
#[derive(Debug)]
struct Bitmap {
    size: u32,
    static_band: u32,
    used: BTreeSet<u32>,
}

impl Bitmap {
    fn new(size: u32, static_band: u32) -> Self {
        Bitmap {
            size,
            static_band,
            used: BTreeSet::new(),
        }
    }

    fn first_free(&self, from: u32, to: u32) -> Option<u32> {
        (from..to).find(|o| !self.used.contains(o))
    }

    fn allocate_next(&mut self) -> Option<u32> {
        let offset = self
            .first_free(self.static_band, self.size)
            .or_else(|| self.first_free(0, self.static_band))?;
        self.used.insert(offset);
        Some(offset)
    }
}

/// The service cluster IP range (`--service-cluster-ip-range`, kubeadm's default
/// `10.96.0.0/12`). The network and broadcast addresses are never handed out. The first
/// host address is the `kubernetes` Service's, which asks for it by address at start (as
/// kube-apiserver's bootstrap controller does); dynamic allocation reaches it only when
/// the rest of the range is taken, as the static band's other addresses.
#[derive(Debug)]
pub struct IpAllocator {
    base: u32,
    prefix: u8,
    bits: Mutex<Bitmap>,
}

impl IpAllocator {
    /// A range of `base/prefix` (a prefix of 8 to 30 bits).
    pub fn new(base: Ipv4Addr, prefix: u8) -> Self {
        let prefix = prefix.clamp(8, 30);
        let size = 1u32 << (32 - prefix);
        // KEP-3070: min(max(16, size / 16), 256) addresses at the bottom are the static band.
        let static_band = (size / 16).clamp(16, 256);
        let mask = u32::MAX << (32 - prefix);
        let mut bits = Bitmap::new(size, static_band);
        bits.used.extend([0, size - 1]);
        IpAllocator {
            base: u32::from(base) & mask,
            prefix,
            bits: Mutex::new(bits),
        }
    }

    /// The range as `--service-cluster-ip-range` spells it.
    pub fn range(&self) -> String {
        format!("{}/{}", Ipv4Addr::from(self.base), self.prefix)
    }

    /// Reserves the next free address.
    pub fn allocate_next(&self) -> Result<Ipv4Addr, AllocError> {
        let offset = self.bits.lock().allocate_next().ok_or(AllocError::Full)?;
        Ok(Ipv4Addr::from(self.base + offset))
    }

    /// Reserves `ip` (a user's choice).
    pub fn allocate(&self, ip: &str) -> Result<(), AllocError> {
        let offset = self.offset(ip).ok_or_else(|| AllocError::NotInRange {
            what: "IP",
            range: self.range(),
        })?;
        if !self.bits.lock().used.insert(offset) {
            return Err(AllocError::Allocated { what: "IP" });
        }
        Ok(())
    }

    /// Frees `ip`; addresses outside the range are ignored.
    pub fn release(&self, ip: &str) {
        if let Some(offset) = self.offset(ip) {
            self.bits.lock().used.remove(&offset);
        }
    }

    fn offset(&self, ip: &str) -> Option<u32> {
        let ip = u32::from(ip.parse::<Ipv4Addr>().ok()?);
        let offset = ip.checked_sub(self.base)?;
        let size = self.bits.lock().size;
        (offset > 0 && offset < size - 1).then_some(offset)
    }
}

impl Default for IpAllocator {
    fn default() -> Self {
        IpAllocator::new(Ipv4Addr::new(10, 96, 0, 0), 12)
    }
}

/// The node port range (`--service-node-port-range`, default `30000-32767`).
#[derive(Debug)]
pub struct PortAllocator {
    first: u16,
    bits: Mutex<Bitmap>,
}

impl PortAllocator {
    /// The ports `first..=last`.
    pub fn new(first: u16, last: u16) -> Self {
        let size = u32::from(last.max(first) - first) + 1;
        // KEP-3668: min(max(16, size / 32), 128) ports at the bottom are the static band.
        let static_band = (size / 32).clamp(16, 128).min(size);
        PortAllocator {
            first,
            bits: Mutex::new(Bitmap::new(size, static_band)),
        }
    }

    /// The range as `--service-node-port-range` spells it.
    pub fn range(&self) -> String {
        let size = self.bits.lock().size;
        format!("{}-{}", self.first, u32::from(self.first) + size - 1)
    }

    /// Reserves the next free port.
    pub fn allocate_next(&self) -> Result<u16, AllocError> {
        let offset = self.bits.lock().allocate_next().ok_or(AllocError::Full)?;
        u16::try_from(u32::from(self.first) + offset).map_err(|_| AllocError::Full)
    }

    /// Reserves `port` (a user's choice).
    pub fn allocate(&self, port: i64) -> Result<(), AllocError> {
        let offset = self.offset(port).ok_or_else(|| AllocError::NotInRange {
            what: "port",
            range: self.range(),
        })?;
        if !self.bits.lock().used.insert(offset) {
            return Err(AllocError::Allocated { what: "port" });
        }
        Ok(())
    }

    /// Frees `port`; ports outside the range are ignored.
    pub fn release(&self, port: i64) {
        if let Some(offset) = self.offset(port) {
            self.bits.lock().used.remove(&offset);
        }
    }

    fn offset(&self, port: i64) -> Option<u32> {
        let offset = u32::try_from(port.checked_sub(i64::from(self.first))?).ok()?;
        (offset < self.bits.lock().size).then_some(offset)
    }
}

impl Default for PortAllocator {
    fn default() -> Self {
        PortAllocator::new(30000, 32767)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KEP-3070: dynamic allocations start above the static band; the network address is
    /// never handed out; the `kubernetes` Service's address is taken by asking for it.
    #[test]
    fn cluster_ips_come_from_the_upper_band_first() {
        let ips = IpAllocator::default();
        assert_eq!(ips.range(), "10.96.0.0/12");
        assert_eq!(ips.allocate_next(), Ok(Ipv4Addr::new(10, 96, 1, 0)));
        assert_eq!(ips.allocate_next(), Ok(Ipv4Addr::new(10, 96, 1, 1)));
        assert_eq!(ips.allocate("10.96.0.10"), Ok(()));
        assert_eq!(
            ips.allocate("10.96.0.10"),
            Err(AllocError::Allocated { what: "IP" })
        );
        assert!(matches!(
            ips.allocate("10.96.0.0"),
            Err(AllocError::NotInRange { .. })
        ));
        assert_eq!(ips.allocate("10.96.0.1"), Ok(()));
        assert!(matches!(
            ips.allocate("192.168.0.1"),
            Err(AllocError::NotInRange { .. })
        ));
        ips.release("10.96.1.0");
        assert_eq!(ips.allocate_next(), Ok(Ipv4Addr::new(10, 96, 1, 0)));
    }

    #[test]
    fn a_full_dynamic_band_falls_back_to_the_static_band_then_fails() {
        // A /28: 16 addresses, all of them the static band's; 0 and 15 are reserved.
        let ips = IpAllocator::new(Ipv4Addr::new(10, 0, 0, 0), 28);
        let got: Vec<_> = (0..14).map_while(|_| ips.allocate_next().ok()).collect();
        assert_eq!(got.len(), 14);
        assert_eq!(got[0], Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(ips.allocate_next(), Err(AllocError::Full));
    }

    /// KEP-3668: 86 ports of 30000-32767 form the static band.
    #[test]
    fn node_ports_skip_the_static_band() {
        let ports = PortAllocator::default();
        assert_eq!(ports.range(), "30000-32767");
        assert_eq!(ports.allocate_next(), Ok(30086));
        assert_eq!(ports.allocate(30080), Ok(()));
        assert_eq!(
            ports.allocate(30080),
            Err(AllocError::Allocated { what: "port" })
        );
        assert_eq!(
            ports.allocate(80).map_err(|e| e.to_string()),
            Err(
                "provided port is not in the valid range. The range of valid ports is 30000-32767"
                    .into()
            )
        );
        ports.release(30086);
        assert_eq!(ports.allocate_next(), Ok(30086));
    }
}
