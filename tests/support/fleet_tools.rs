//! The fleet tests' real counterparts, installed pinned by `.ci/install-fleet-tools` in a
//! venv under target/fleet-tools (or $CN_RUN_FLEET_TOOLS): moto's S3 server (started here
//! on a free loopback port, stopped by its pid when dropped), kubernetes-validate and
//! actionlint. Without them the tests skip, saying so.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The venv's `bin` folder, if the tools are installed.
pub fn bin_dir() -> Option<PathBuf> {
    let root = std::env::var_os("CN_RUN_FLEET_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::runner::repo_root().join("target/fleet-tools"));
    let bin = root.join("py/bin");
    bin.join("python").is_file().then_some(bin)
}

/// A tool of the venv, or `None` with a SKIPPED line.
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = bin_dir().map(|b| b.join(name)).filter(|p| p.is_file());
    if found.is_none() {
        eprintln!("SKIPPED: {name} is not installed; run .ci/install-fleet-tools");
    }
    found
}

/// The secret key the tests give cn-run for moto (a secret-looking variable: masked).
pub const SECRET_KEY: &str = "moto-secret-7c1e9a2b44";

/// moto's S3 server on 127.0.0.1, with one bucket.
pub struct Moto {
    child: Child,
    pub port: u16,
    pub bucket: String,
}

impl Moto {
    /// Start the server and make `bucket`; `None` (skipped) when moto is not installed.
    pub fn start(bucket: &str) -> Option<Moto> {
        let server = tool("moto_server")?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .ok()?;
        let child = Command::new(server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let moto = Moto {
            child,
            port,
            bucket: bucket.to_owned(),
        };
        let give_up = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < give_up, "moto_server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        moto.python(&format!("s3.create_bucket(Bucket={bucket:?})"));
        Some(moto)
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The variables cn-run reads the store's credentials and endpoint from.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID".into(), "testing-key-id".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), SECRET_KEY.into()),
            ("AWS_DEFAULT_REGION".into(), "us-east-1".into()),
            ("AWS_ENDPOINT_URL".into(), self.endpoint()),
        ]
    }

    /// Run `code` with `s3` a boto3 client of this server; its stdout.
    pub fn python(&self, code: &str) -> String {
        let python = bin_dir().unwrap().join("python");
        let script = format!(
            "import boto3, sys\ns3 = boto3.client('s3', endpoint_url={:?}, aws_access_key_id='k', aws_secret_access_key='s', region_name='us-east-1')\n{code}\n",
            self.endpoint()
        );
        let out = Command::new(python).args(["-c", &script]).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Every key in the bucket under `prefix`.
    pub fn keys(&self, prefix: &str) -> Vec<String> {
        let out = self.python(&format!(
            "r = s3.list_objects_v2(Bucket={:?}, Prefix={prefix:?})\nfor o in r.get('Contents', []): print(o['Key'])",
            self.bucket
        ));
        out.lines().map(str::to_owned).collect()
    }

    /// One object's bytes.
    pub fn get(&self, key: &str) -> Vec<u8> {
        let out = self.python(&format!(
            "sys.stdout.buffer.write(s3.get_object(Bucket={:?}, Key={key:?})['Body'].read())",
            self.bucket
        ));
        out.into_bytes()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, as bytes, for "no secret anywhere" checks.
pub fn all_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    super::runner::files_under(dir)
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}
