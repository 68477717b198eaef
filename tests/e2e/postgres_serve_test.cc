// `steward serve --database postgres://...` as a process against a real PostgreSQL
// (LocalPostgres): a project's life through the CLI, the database stopping under
// it (the API answers 503, nothing acknowledged is lost) and coming back, and a database that
// cannot be reached at start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>

#include "local_postgres/local_postgres.h"
#include "process.h"
#include "test_support/held_port.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class PostgresServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pg = LocalPostgres::Launch();
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    pg_ = std::move(*pg);
    ASSERT_TRUE(pg_->CreateDatabase("steward").ok());
  }
  // Starts `steward serve` on the test's database; false (with the output) when it did not.
  void Serve() {
    serve_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{StewardBinary(), "serve", "--embedded-cluster", "instant",
                                 "--data-dir", dir_.path() + "/data", "--listen", "127.0.0.1:0",
                                 "--log-level", "warn", "--database", pg_->Url("steward")});
    auto address = WaitForServeAddress(*serve_);
    auto store = serve_->WaitForLine("  Store ", seconds(10));
    ASSERT_TRUE(address && store) << serve_->output();
    EXPECT_THAT(*store, HasSubstr("postgres://steward@127.0.0.1:" + std::to_string(pg_->port()) +
                                  "/steward"));
    server_ = address->server;
    token_file_ = address->token_file;
  }
  RunResult Cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", StewardBinary(),
                                     "project"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", server_, "--token-file", token_file_});
    return ::steward::e2e::Run(argv, "", seconds(90));
  }

  TempDir dir_;
  std::unique_ptr<LocalPostgres> pg_;
  std::unique_ptr<BackgroundProcess> serve_;
  std::string server_, token_file_;
};

TEST_F(PostgresServeTest, AProjectLivesThroughADatabaseOutage) {
  ASSERT_NO_FATAL_FAILURE(Serve());
  RunResult create = Cli({"create", "alpha", "--team", "team-a", "--image", "nodered/node-red:4.0",
                          "--start", "--wait", "60s"});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  EXPECT_THAT(create.out, HasSubstr("alpha is Running at generation 1"));

  ASSERT_TRUE(pg_->Stop().ok());
  RunResult down = Cli({"get", "alpha"});
  EXPECT_NE(down.exit_code, 0) << Describe(down);
  EXPECT_THAT(down.err, HasSubstr("Unavailable")) << Describe(down);
  EXPECT_THAT(down.err, HasSubstr("127.0.0.1")) << Describe(down);
  RunResult refused = Cli({"suspend", "alpha"});
  EXPECT_NE(refused.exit_code, 0) << Describe(refused);

  ASSERT_TRUE(pg_->Start().ok());
  // Nothing acknowledged was lost; the refused suspend did not happen; writes work again.
  RunResult get = Cli({"get", "alpha"});
  ASSERT_EQ(get.exit_code, 0) << Describe(get);
  EXPECT_THAT(get.out, HasSubstr("running"));
  RunResult suspend = Cli({"suspend", "alpha", "--wait", "60s"});
  ASSERT_EQ(suspend.exit_code, 0) << Describe(suspend);
  EXPECT_THAT(suspend.out, HasSubstr("Suspended"));
  EXPECT_EQ(serve_->Stop(SIGTERM, seconds(30)), 0) << serve_->output();
  EXPECT_EQ(pg_->Query("steward", "SELECT desired FROM projects WHERE name = 'alpha'").value(),
            "suspended");
}

TEST_F(PostgresServeTest, AnUnreachableDatabaseFailsTheStartNamingItNeverThePassword) {
  int port = 0;
  {
    test_support::HeldPort closed;  // closed again at once: nobody listens there
    port = closed.port();
  }
  const std::string password_file = dir_.path() + "/db-password";
  std::ofstream(password_file) << "pw-s3cret\n";
  ASSERT_EQ(chmod(password_file.c_str(), 0600), 0);
  const std::string url = "postgres://steward@127.0.0.1:" + std::to_string(port) + "/steward";
  RunResult r = ::steward::e2e::Run({StewardBinary(), "serve", "--embedded-cluster", "instant",
                                     "--data-dir", dir_.path() + "/data", "--listen", "127.0.0.1:0",
                                     "--database", url, "--database-password-file", password_file},
                                    "", seconds(60));
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("database: " + url + ": cannot connect")) << Describe(r);
  EXPECT_THAT(r.out + r.err, Not(HasSubstr("s3cret")));

  RunResult in_url = ::steward::e2e::Run(
      {StewardBinary(), "serve", "--embedded-cluster", "instant", "--data-dir",
       dir_.path() + "/data", "--database", "postgres://steward:pw-s3cret@127.0.0.1/steward"},
      "", seconds(60));
  EXPECT_NE(in_url.exit_code, 0) << Describe(in_url);
  EXPECT_THAT(in_url.err, HasSubstr("put the password in databasePasswordFile or PGPASSWORD"));
  EXPECT_THAT(in_url.out + in_url.err, Not(HasSubstr("s3cret")));
}

}  // namespace
}  // namespace steward::e2e
