// A user's mistake in a scenario, topology or command line: reported as one line, exit code 2.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "input/printable.h"

namespace wakesim {

class InputError : public std::runtime_error {
public:
    // The one line "file: pointer: expected", as a caller that composes its own text needs it.
    static std::string line(const std::string& f, const std::string& p, const std::string& e) { return format(f, p, e); }

    // file: path as the user gave it; pointer: RFC 6901 JSON pointer ("" = whole document);
    // expected: what would have been accepted.
    InputError(std::string file, std::string pointer, std::string expected)
        : std::runtime_error(format(file, pointer, expected)),
          file_(std::move(file)), pointer_(std::move(pointer)), expected_(std::move(expected)) {}

    const std::string& file() const { return file_; }
    const std::string& pointer() const { return pointer_; }
    const std::string& expected() const { return expected_; }

private:
    // A command-line option ("--shard") in the place of a file has no JSON pointer.
    static std::string format(const std::string& f, const std::string& p, const std::string& e) {
        if (p.empty() && f.rfind("--", 0) == 0) return one_line(f) + ": " + e;
        return one_line(f) + ": " + (p.empty() ? std::string("/") : p) + ": " + e;
    }
    // A file name as the user gave it may hold control characters or bytes that are not UTF-8:
    // keep the message on one line, and cut a name far longer than any real path's readable part.
    static std::string one_line(const std::string& s) { return printable_line(s, 256); }
    std::string file_, pointer_, expected_;
};

// Several mistakes of one file, found in one pass: what() holds one line per error (at most
// kMaxReported, then a line saying how many more there were). As an InputError it is the first.
class InputErrors : public InputError {
public:
    static constexpr size_t kMaxReported = 20;

    InputErrors(std::vector<InputError> all, size_t more)
        : InputError(all.front()), all_(std::move(all)), more_(more) {
        for (const InputError& e : all_) {
            if (!text_.empty()) text_ += '\n';
            text_ += e.what();
        }
        if (more_ > 0) {
            std::string rest = "and ";
            rest += std::to_string(more_);
            rest += more_ == 1 ? " more error not shown" : " more errors not shown";
            text_ += '\n';
            text_ += line(all_.front().file(), "", rest);
        }
    }
    const std::vector<InputError>& all() const { return all_; }
    size_t more() const { return more_; }
    const char* what() const noexcept override { return text_.c_str(); }

private:
    std::vector<InputError> all_;
    size_t more_ = 0;
    std::string text_;
};

// Gathers the errors of independent parts of one file (each workload task, each case, each
// section) so that a user sees them all at once. attempt() runs one part and records what it
// throws; finish() throws them (nothing when all parts were fine).
class InputErrorCollector {
public:
    template <class F>
    bool attempt(F&& part) {
        try {
            part();
            return true;
        } catch (const InputErrors& e) {
            for (const InputError& x : e.all()) add(x);
            more_ += e.more();
        } catch (const InputError& e) {
            add(e);
        }
        return false;
    }
    void add(const InputError& e) {
        if (errors_.size() < InputErrors::kMaxReported)
            errors_.push_back(e);
        else
            ++more_;
    }
    bool empty() const { return errors_.empty(); }
    size_t count() const { return errors_.size() + more_; }  // errors so far, reported or not
    void add_unreported(size_t n) { more_ += n; }            // errors counted, not shown
    void finish() const {
        if (errors_.empty()) return;
        if (errors_.size() == 1 && more_ == 0) throw errors_.front();
        throw InputErrors(errors_, more_);
    }

private:
    std::vector<InputError> errors_;
    size_t more_ = 0;
};

}  // namespace wakesim
