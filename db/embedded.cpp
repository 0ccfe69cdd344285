#include "db/embedded.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/file_lock.h"
#include "common/process.h"
#include "common/text.h"
#include "db/connection_impl.h"

namespace db {
namespace fs = std::filesystem;
using common::Fatal;

namespace {

constexpr const char* kDatabaseName = "driftwatch";

std::string read_first_line(const fs::path& p);

/// The server binaries of the cluster's own major version when they are
/// installed (Debian keeps an older major beside a newer one), else the
/// newest installed: a new cluster is made with the newest.
fs::path postgres_bin_dir(const fs::path& data) {
  std::error_code ec;
  if (fs::exists(data / "PG_VERSION", ec)) {
    auto own = fs::path("/usr/lib/postgresql") / read_first_line(data / "PG_VERSION") / "bin";
    if (fs::exists(own / "pg_ctl", ec)) return own;
  }
  fs::path best;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    auto bin = e.path() / "bin";
    if (fs::exists(bin / "pg_ctl") && (best.empty() || std::stoi(e.path().filename()) >
                                                           std::stoi(best.parent_path().filename())))
      best = bin;
  }
  if (best.empty())
    throw Fatal("PostgreSQL server is not installed (no /usr/lib/postgresql/*/bin/pg_ctl); run scripts/setup");
  return best;
}

std::string read_first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return common::trim(line);
}

struct ServerUser {
  uid_t uid;
  gid_t gid;
  std::string name;
  bool switch_user;  // running as root: the server runs as `postgres`
};

ServerUser server_user() {
  if (geteuid() != 0) {
    const passwd* pw = getpwuid(geteuid());
    return {geteuid(), getegid(), pw ? pw->pw_name : std::to_string(geteuid()), false};
  }
  const passwd* pw = getpwnam("postgres");
  if (!pw) throw Fatal("running as root needs the `postgres` system user for the embedded database; run scripts/setup");
  return {pw->pw_uid, pw->pw_gid, "postgres", true};
}

std::string user_name(uid_t uid) {
  const passwd* pw = getpwuid(uid);
  return pw ? pw->pw_name : "uid " + std::to_string(uid);
}

/// `cwd` defaults to "/": the server user may not be able to enter ours.
common::ProcessResult run_as_server(const std::vector<std::string>& args,
                                    std::vector<std::pair<std::string, std::string>> env = {}, fs::path cwd = "/") {
  auto user = server_user();
  std::vector<std::string> argv;
  if (user.switch_user) argv = {"runuser", "-u", user.name, "--"};
  argv.insert(argv.end(), args.begin(), args.end());
  common::ProcessSpec spec;
  spec.argv = argv;
  spec.env = std::move(env);
  spec.timeout = std::chrono::seconds(120);
  spec.cwd = cwd;
  return common::run_process(spec).take();
}

/// Peer authentication on the unix socket (the server listens on nothing
/// else), mapped so that only the user running driftwatch and the server's
/// own user may log in, as the superuser `postgres`. Older versions wrote
/// `trust` here: the file is rewritten at every start.
std::string hba_conf() {
  return "# Written by driftwatch at every start: only the owner of this cluster gets in.\n"
         "local all all peer map=driftwatch\n";
}

std::string ident_conf(const ServerUser& server) {
  std::string out = "# Who may log in as the superuser `postgres` (see pg_hba.conf).\n";
  std::string client = user_name(geteuid());
  out += "driftwatch " + client + " postgres\n";
  if (server.name != client) out += "driftwatch " + server.name + " postgres\n";
  return out;
}

/// A value in a libpq conninfo string: a path may hold spaces and quotes.
std::string conninfo_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) out += (c == '\'' || c == '\\') ? std::string{'\\', c} : std::string(1, c);
  return out + "'";
}

/// A value for unix_socket_directories, which is a comma-separated list.
std::string socket_dir_list(const std::string& dir) {
  std::string out = "\"";
  for (char c : dir) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

EmbeddedCluster::EmbeddedCluster(fs::path root, EmbeddedOptions options)
    : root_(fs::absolute(std::move(root))), options_(options) {}

void EmbeddedCluster::check_sane() const {
  auto user = server_user();
  if (fs::exists(root_) && !fs::is_directory(root_))
    throw Fatal("embedded database path " + root_.string() + " is not a directory");
  std::error_code ec;
  for (fs::path p = root_.parent_path(); !p.empty() && p != p.parent_path(); p = p.parent_path())
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))  // a data directory given as a file, say
      throw Fatal(p.string() + " is not a directory; the embedded database cannot live under it (" +
                  root_.string() + ")");
  // The server user must be able to walk down to the cluster (root's /root is 0700).
  if (user.switch_user) {
    for (fs::path p = root_.parent_path(); !p.empty(); p = p.parent_path()) {
      struct stat st {};
      if (stat(p.c_str(), &st) == 0 && st.st_uid != user.uid && !(st.st_mode & S_IXOTH))
        throw Fatal("the postgres user cannot reach " + root_.string() + ": " + p.string() +
                    " is not searchable by others; choose a --data-dir outside it");
      if (p == p.parent_path()) break;
    }
  }
  auto data = data_dir();
  if (!fs::exists(data)) return;
  struct stat st {};
  if (stat(data.c_str(), &st) != 0) throw Fatal("cannot read " + data.string() + ": " + strerror(errno));
  if (st.st_uid != user.uid)
    throw Fatal("database directory " + data.string() + " is owned by " + user_name(st.st_uid) +
                ", not by " + user.name + " who runs the server");
  if (!fs::exists(data / "PG_VERSION"))
    throw Fatal("database directory " + data.string() +
                " is not a PostgreSQL cluster (no PG_VERSION); move it away to start afresh");
  auto have = read_first_line(data / "PG_VERSION");
  auto want = postgres_bin_dir(data).parent_path().filename().string();
  if (have != want)
    throw Fatal("database directory " + data.string() + " was made by PostgreSQL " + have + ", whose server is not " +
                "installed (PostgreSQL " + want + " is): install postgresql-" + have + ", or upgrade the cluster " +
                "with pg_upgrade");
  if (!fs::exists(data / "global" / "pg_control"))
    throw Fatal("database directory " + data.string() + " is damaged (global/pg_control is missing)");
}

EmbeddedStatus EmbeddedCluster::status() const {
  check_sane();
  EmbeddedStatus s;
  s.initialized = fs::exists(data_dir() / "PG_VERSION");
  if (!s.initialized) return s;
  s.server_version = read_first_line(data_dir() / "PG_VERSION");
  auto r = run_as_server({(postgres_bin_dir(data_dir()) / "pg_ctl").string(), "status", "-D", data_dir().string()});
  s.running = r.ok();
  if (s.running) {
    auto pid = read_first_line(data_dir() / "postmaster.pid");
    if (!pid.empty()) s.pid = std::stol(pid);
  }
  return s;
}

void EmbeddedCluster::init_locked() const {
  auto user = server_user();
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throw Fatal("cannot create " + root_.string() + ": " + ec.message());
  if (user.switch_user && chown(root_.c_str(), user.uid, user.gid) != 0)
    throw Fatal("cannot hand " + root_.string() + " to postgres: " + strerror(errno));
  // initdb into a scratch directory, renamed when complete, so an interrupted
  // initdb never leaves a half-made cluster behind.
  auto scratch = root_ / "data.initdb";
  fs::remove_all(scratch, ec);
  std::vector<std::string> args = {(postgres_bin_dir(data_dir()) / "initdb").string(),
                                   "-D",
                                   scratch.string(),
                                   "-U",
                                   "postgres",
                                   "--auth-local=peer",
                                   "--auth-host=reject",
                                   "-E",
                                   "UTF8",
                                   "--no-locale"};
  if (!options_.durable) args.push_back("--no-sync");
  auto r = run_as_server(args);
  if (!r.ok()) throw Fatal("initdb failed (" + r.describe() + "): " + common::last_line(r.output));
  fs::rename(scratch, data_dir(), ec);
  if (ec) throw Fatal("cannot move new cluster into " + data_dir().string() + ": " + ec.message());
}

bool EmbeddedCluster::make_private_locked() const {
  auto user = server_user();
  // The socket's directory: the server's user alone (root passes anyway).
  if (chmod(root_.c_str(), 0700) != 0) throw Fatal("cannot make " + root_.string() + " private: " + strerror(errno));
  bool changed = false;
  for (const auto& [name, text] : {std::pair{"pg_hba.conf", hba_conf()}, {"pg_ident.conf", ident_conf(user)}}) {
    auto file = data_dir() / name;
    std::ifstream in(file);
    std::string have((std::istreambuf_iterator<char>(in)), {});
    if (have == text) continue;
    common::write_file_atomically(file, text).take();
    if (chmod(file.c_str(), 0600) != 0 || (user.switch_user && chown(file.c_str(), user.uid, user.gid) != 0))
      throw Fatal("cannot hand " + file.string() + " to " + user.name + ": " + strerror(errno));
    changed = true;
  }
  return changed;
}

void EmbeddedCluster::start_locked() const {
  std::string socket = (root_ / (".s.PGSQL." + std::to_string(options_.port))).string();
  if (socket.size() >= 108)
    throw Fatal("data directory path is too long for a unix socket (" + socket + "); choose a shorter --data-dir");
  // pg_ctl hands -o, -D and -l to /bin/sh (the last two in double quotes, where
  // $(…) still runs): the data directory goes in PGDATA, the log path is
  // relative to the directory pg_ctl runs in, and -o is quoted word by word.
  std::string server_opts = "-k " + common::shell_quote(socket_dir_list(root_.string())) + " -p " +
                            std::to_string(options_.port) + " -c listen_addresses='' -c unix_socket_permissions=0700";
  if (!options_.durable) server_opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  auto log = root_ / "server.log";
  auto r = run_as_server(
      {(postgres_bin_dir(data_dir()) / "pg_ctl").string(), "start", "-l", "server.log", "-w", "-t", "60", "-o", server_opts},
      {{"PGDATA", data_dir().string()}}, root_);
  if (!r.ok()) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    throw Fatal("embedded PostgreSQL did not start (" + r.describe() + ", see " + log.string() +
                "): " + common::last_line(text.empty() ? r.output : text));
  }
}

bool started_elsewhere(bool pid_file, const std::string& started_on, const std::string& this_host, bool network_fs) {
  return pid_file && network_fs && !started_on.empty() && started_on != this_host;
}

namespace {

bool on_network_filesystem(const fs::path& dir) {
  struct statfs s {};
  if (statfs(dir.c_str(), &s) != 0) return false;
  // linux/magic.h: NFS, SMB, CIFS, SMB2, Ceph, FUSE (sshfs, GlusterFS), AFS, 9p, Lustre, GFS2, OCFS2.
  for (unsigned long magic : {0x6969ul, 0x517Bul, 0xFF534D42ul, 0xFE534D42ul, 0x00C36400ul, 0x65735546ul,
                              0x5346414Ful, 0x01021997ul, 0x0BD00BD0ul, 0x01161970ul, 0x7461636Ful})
    if (static_cast<unsigned long>(s.f_type) == magic) return true;
  return false;
}

}  // namespace

void EmbeddedCluster::start() const {
  common::ensure_writable_dir(root_.parent_path(), "data directory");
  auto lock = common::FileLock::acquire(root_.string() + ".lock").take();
  check_sane();
  if (!fs::exists(data_dir())) init_locked();
  bool changed = make_private_locked();
  if (!status().running) {
    // A data directory shared over NFS: pg_ctl checks the server's pid on
    // this host only, so a server another host runs looks stale here, and a
    // second one on the same files would corrupt them.
    auto host_file = root_ / "server.host";
    auto host = read_first_line(host_file);
    if (started_elsewhere(fs::exists(data_dir() / "postmaster.pid"), host, common::host_name(),
                          on_network_filesystem(data_dir())))
      throw Fatal("the embedded PostgreSQL in " + data_dir().string() + " was started on host " + host +
                  ": use it from there (or give --db / DRIFTWATCH_DB its address); if that host's server is gone, "
                  "remove " + (data_dir() / "postmaster.pid").string());
    start_locked();
    common::write_file_atomically(host_file, common::host_name() + "\n").take();
  } else if (changed) {  // a server an older version started with trust
    auto r = run_as_server({(postgres_bin_dir(data_dir()) / "pg_ctl").string(), "reload", "-D", data_dir().string()});
    if (!r.ok()) throw Fatal("pg_ctl reload failed (" + r.describe() + "): " + common::last_line(r.output));
  }

  create_database(target("postgres"), kDatabaseName);
}

void EmbeddedCluster::stop() const {
  if (!fs::exists(root_)) return;
  auto lock = common::FileLock::acquire(root_.string() + ".lock").take();
  if (!status().running) return;
  auto r = run_as_server({(postgres_bin_dir(data_dir()) / "pg_ctl").string(), "stop", "-D", data_dir().string(), "-m",
                          "fast", "-w", "-t", "60"});
  if (!r.ok()) throw Fatal("pg_ctl stop failed (" + r.describe() + "): " + common::last_line(r.output));
}

Target EmbeddedCluster::target(const std::string& dbname) const {
  Target t;
  t.conninfo = "host=" + conninfo_value(root_.string()) + " port=" + std::to_string(options_.port) +
               " user=postgres dbname=" + conninfo_value(dbname);
  t.display = "embedded " + root_.string() + " dbname=" + dbname;
  // Only a cluster that is still there, and not while this process stops
  // (a shutdown stopping the server too): a moved data directory must not
  // come back as an empty cluster.
  t.start_server = [cluster = *this] {
    if (common::StopScope::stopped()) throw Fatal("driftwatch is stopping");
    if (!fs::exists(cluster.root() / "data" / "PG_VERSION"))
      throw Fatal("the embedded cluster " + (cluster.root() / "data").string() + " is gone");
    cluster.start();
  };
  return t;
}

}  // namespace db
