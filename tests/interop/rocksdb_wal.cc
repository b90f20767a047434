// A small driver of the RocksDB C++ library for tests/interop/test_rocksdb78_interop.py.
//
//   rocksdb_wal write DB [--zstd] [--recycle] [--cf NAME]... [--copy-to DIR]
//                                                   (batches on stdin)
//   rocksdb_wal read DB [--mode absolute|pit|tolerate|skip]
//
// "write" creates DB (with the column families named, numbered 1, 2, ... after
// "default" = 0), applies one WriteBatch per line of stdin and closes the
// database without flushing, so that every write stays in its write-ahead log;
// with --copy-to, DB's folder is first copied to DIR while it is still open
// (what a backup taken of a live database holds).
// A line is a batch of space-separated operations, byte strings in hex:
//   P,cf,key,value   Put          D,cf,key         Delete
//   S,cf,key         SingleDelete M,cf,key,value   Merge
//   R,cf,begin,end   DeleteRange  L,blob           PutLogData
// "read" opens DB with paranoid checks (so a corruption the recovery mode does
// not tolerate fails the open), prints "cf<TAB>key<TAB>value" in hex for every
// entry of every column family, then "sequence N", and closes the database.
// Both use the merge operator "leveldb_log.concat", which appends operands.
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

class Concat : public rocksdb::AssociativeMergeOperator {
  public:
    bool Merge(const rocksdb::Slice &, const rocksdb::Slice *existing,
               const rocksdb::Slice &value, std::string *new_value,
               rocksdb::Logger *) const override {
        new_value->assign(existing ? existing->ToString() : "");
        new_value->append(value.data(), value.size());
        return true;
    }
    const char *Name() const override { return "leveldb_log.concat"; }
};

[[noreturn]] void fail(const std::string &what, const rocksdb::Status &s) {
    std::cerr << what << ": " << s.ToString() << std::endl;
    std::exit(1);
}

std::string unhex(const std::string &hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(
            static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

std::string hex(const rocksdb::Slice &s) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep)) {
        parts.push_back(part);
    }
    if (!text.empty() && text.back() == sep) {
        parts.push_back("");
    }
    return parts;
}

rocksdb::Options base_options() {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.paranoid_checks = true;
    options.write_buffer_size = 256 << 20; // no flush during a test
    options.disable_auto_compactions = true;
    options.merge_operator = std::make_shared<Concat>();
    return options;
}

using Handles = std::vector<rocksdb::ColumnFamilyHandle *>;

// One operation of a batch line into the batch.
void add_op(rocksdb::WriteBatch &batch, const Handles &cfs,
            const std::string &text) {
    std::vector<std::string> f = split(text, ',');
    rocksdb::Status s;
    if (f[0] == "L") {
        s = batch.PutLogData(unhex(f[1]));
    } else {
        rocksdb::ColumnFamilyHandle *cf = cfs.at(std::stoul(f[1]));
        if (f[0] == "P") {
            s = batch.Put(cf, unhex(f[2]), unhex(f[3]));
        } else if (f[0] == "D") {
            s = batch.Delete(cf, unhex(f[2]));
        } else if (f[0] == "S") {
            s = batch.SingleDelete(cf, unhex(f[2]));
        } else if (f[0] == "M") {
            s = batch.Merge(cf, unhex(f[2]), unhex(f[3]));
        } else if (f[0] == "R") {
            s = batch.DeleteRange(cf, unhex(f[2]), unhex(f[3]));
        } else {
            s = rocksdb::Status::InvalidArgument("unknown operation", f[0]);
        }
    }
    if (!s.ok()) {
        fail("batch", s);
    }
}

rocksdb::DB *open_db(const std::string &path, const rocksdb::Options &options,
                     const std::vector<std::string> &names, Handles *cfs) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string &name : names) {
        descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));
    }
    rocksdb::DB *db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(rocksdb::DBOptions(options), path,
                                          descriptors, cfs, &db);
    if (!s.ok()) {
        fail("open", s);
    }
    return db;
}

void close_db(rocksdb::DB *db, Handles &cfs) {
    for (rocksdb::ColumnFamilyHandle *cf : cfs) {
        db->DestroyColumnFamilyHandle(cf);
    }
    rocksdb::Status s = db->Close();
    if (!s.ok()) {
        fail("close", s);
    }
    delete db;
}

int do_write(const std::string &path, const std::vector<std::string> &args) {
    rocksdb::Options options = base_options();
    std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName};
    std::string copy_to;
    for (size_t i = 0; i < args.size(); i++) {
        if (args[i] == "--zstd") {
            options.wal_compression = rocksdb::kZSTD;
        } else if (args[i] == "--recycle") {
            // 7.8 turns recycling off in point-in-time mode (9.x allows it)
            options.recycle_log_file_num = 2;
            options.wal_recovery_mode =
                rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
        } else if (args[i] == "--cf" && i + 1 < args.size()) {
            names.push_back(args[++i]);
        } else if (args[i] == "--copy-to" && i + 1 < args.size()) {
            copy_to = args[++i];
        }
    }
    Handles cfs;
    rocksdb::DB *db = open_db(path, options, names, &cfs);
    std::string line;
    while (std::getline(std::cin, line)) {
        rocksdb::WriteBatch batch;
        for (const std::string &op : split(line, ' ')) {
            add_op(batch, cfs, op);
        }
        rocksdb::Status s = db->Write(rocksdb::WriteOptions(), &batch);
        if (!s.ok()) {
            fail("write", s);
        }
    }
    if (!copy_to.empty()) {
        std::filesystem::copy(path, copy_to,
                              std::filesystem::copy_options::recursive);
    }
    close_db(db, cfs);
    return 0;
}

rocksdb::WALRecoveryMode recovery_mode(const std::string &name) {
    if (name == "pit") {
        return rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    }
    if (name == "tolerate") {
        return rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
    }
    if (name == "skip") {
        return rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
    }
    return rocksdb::WALRecoveryMode::kAbsoluteConsistency;
}

int do_read(const std::string &path, const std::vector<std::string> &args) {
    rocksdb::Options options = base_options();
    options.create_if_missing = false;
    if (args.size() == 2 && args[0] == "--mode") {
        options.wal_recovery_mode = recovery_mode(args[1]);
    }
    std::vector<std::string> names;
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(
        rocksdb::DBOptions(options), path, &names);
    if (!s.ok()) {
        fail("list column families", s);
    }
    Handles cfs;
    rocksdb::DB *db = open_db(path, options, names, &cfs);
    for (rocksdb::ColumnFamilyHandle *cf : cfs) {
        std::unique_ptr<rocksdb::Iterator> it(
            db->NewIterator(rocksdb::ReadOptions(), cf));
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
            std::cout << cf->GetID() << '\t' << hex(it->key()) << '\t'
                      << hex(it->value()) << '\n';
        }
        if (!it->status().ok()) {
            fail("iterate", it->status());
        }
    }
    std::cout << "sequence " << db->GetLatestSequenceNumber() << std::endl;
    close_db(db, cfs);
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 3) {
        std::cerr << "usage: rocksdb_wal write|read DB [options]" << std::endl;
        return 2;
    }
    std::string command = argv[1];
    std::vector<std::string> args(argv + 3, argv + argc);
    if (command == "write") {
        return do_write(argv[2], args);
    }
    if (command == "read") {
        return do_read(argv[2], args);
    }
    std::cerr << "unknown command " << command << std::endl;
    return 2;
}
