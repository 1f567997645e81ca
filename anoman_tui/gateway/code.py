"""The code in the simulated models' answers: in the language asked, about the task asked.

``code_language(prompt)`` names the language a prompt asks for (Python when it names
none); ``read_task(prompt)`` finds the task ("checks whether a string is a palindrome"),
and ``code_block(task, language)`` writes a fenced block for it. A handful of common tasks
(a palindrome check, Fibonacci numbers, a factorial, reversing a string, a prime check,
counting words) are written out in Python, JavaScript, TypeScript, Go, Rust and Java, and
retrying with back-off in Python; any other task, or another language, gets a small
function named after the task that checks its input and marks where the work goes: a
sketch, not a solution.

Imports only the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (fence name, pattern), most specific first: "TypeScript" before "Java", "C++" before "C".
_LANGUAGES: list[tuple[str, re.Pattern[str]]] = [
    ("typescript", re.compile(r"\b(typescript|ts)\b", re.I)),
    ("javascript", re.compile(r"\b(javascript|js|node(?:\.js)?|nodejs)\b", re.I)),
    ("rust", re.compile(r"\brust\b", re.I)),
    ("go", re.compile(r"\b(golang|in go|go (?:function|program|code|func|snippet|version))\b",
                      re.I)),
    ("java", re.compile(r"\bjava\b(?!script)", re.I)),
    ("kotlin", re.compile(r"\bkotlin\b", re.I)),
    ("swift", re.compile(r"\bswift\b", re.I)),
    ("cpp", re.compile(r"(?<!\w)(c\+\+|cpp)(?!\w)", re.I)),
    ("csharp", re.compile(r"(?<!\w)(c#|csharp|c sharp)(?!\w)", re.I)),
    ("ruby", re.compile(r"\bruby\b", re.I)),
    ("php", re.compile(r"\bphp\b", re.I)),
    ("c", re.compile(r"\b(in c|c function|c program|c code)\b(?![+#])", re.I)),
    ("python", re.compile(r"\bpython\b", re.I)),
    ("bash", re.compile(r"\b(bash|shell|sh script|command line|terminal|cli)\b", re.I)),
    ("sql", re.compile(r"\b(sql|postgres|postgresql|mysql|sqlite|query)\b", re.I)),
]
# A language's name in a prompt, to take out before the task is read ("in Rust").
LANGUAGE_WORDS = re.compile(
    r"\b(?:in|using|with|dalam|pakai|menggunakan)\s+(?:typescript|javascript|node\.?js|rust|"
    r"golang|go|java|kotlin|swift|c\+\+|c#|ruby|php|python|bash|sql|c)(?!\w)", re.I)

_STOP = frozenset("""
    a an the that which who to of in on for with and or is are be whether if it its this
    any given all some my your from into as by each every me i we you please can could
    would should will does do function method program script snippet code small simple
    quick short write create implement make build give show yang dan untuk dengan sebuah
    fungsi kode program buat buatkan tulis tuliskan
""".split())  # noqa: SIM905 - a word list reads better as text
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


@dataclass(frozen=True, slots=True)
class Task:
    """What the code is to do: a known task's key, or "" and the task in words."""

    key: str
    words: tuple[str, ...]  # the task's content words, lowercased ("parse", "csv", "line")
    phrase: str  # the task as the user wrote it, for a comment ("parses a CSV line")

    @property
    def snake(self) -> str:
        return "_".join(self.words) or "solve"

    @property
    def camel(self) -> str:
        first, *rest = self.words or ("solve",)
        return first + "".join(w.capitalize() for w in rest)

    @property
    def pascal(self) -> str:
        return "".join(w.capitalize() for w in self.words) or "Solve"


_TASKS: list[tuple[str, re.Pattern[str]]] = [
    ("palindrome", re.compile(r"palindrom", re.I)),
    ("fibonacci", re.compile(r"fibonacci", re.I)),
    ("factorial", re.compile(r"factorial|faktorial", re.I)),
    ("prime", re.compile(r"\bprimes?\b|\bprima\b", re.I)),
    ("word_count", re.compile(r"\b(count|counts|counting|hitung)\b.*\b(words?|kata)\b|"
                              r"\bword (count|frequenc)", re.I)),
    ("retry", re.compile(r"\bretr(y|ies|ying)\b.*\b(back-?off|attempts?|failures?|errors?)\b",
                         re.I)),
    ("reverse", re.compile(r"\brevers\w*\b.*\b(string|text|word|kata|teks)\b|"
                           r"\bbalik\w*\b", re.I)),
]


def code_language(prompt: str, default: str = "python") -> str:
    """The fence name of the language ``prompt`` asks for; ``default`` when it names none."""
    for name, pattern in _LANGUAGES:
        if pattern.search(prompt):
            return name
    return default


def names_language(prompt: str) -> bool:
    return any(pattern.search(prompt) for _, pattern in _LANGUAGES)


def read_task(prompt: str) -> Task:
    """The task a coding prompt asks for: what follows "that"/"to"/"which" ("a function
    that checks whether ..."), else the prompt without its request words."""
    text = LANGUAGE_WORDS.sub(" ", prompt)
    match = re.search(r"\b(?:that|which|to|who|yang|untuk)\s+(.+)", text, re.I)
    phrase = (match.group(1) if match else text).strip().rstrip(".?!")
    for key, pattern in _TASKS:
        if pattern.search(text):
            return Task(key, tuple(key.split("_")), phrase)
    words = [w.lower() for w in _WORD.findall(phrase) if w.lower() not in _STOP]
    if words and len(words[0]) > 3 and words[0].endswith("s") and not words[0].endswith("ss"):
        # The task's verb as a name: "checks" -> "check", "parses" -> "parse",
        # "fixes" -> "fix", "matches" -> "match".
        if words[0].endswith("ies"):
            words[0] = words[0][:-3] + "y"
        else:
            words[0] = words[0][:-2 if re.search(r"(x|z|ch|sh|ss)es$", words[0]) else -1]
    return Task("", tuple(words[:3]), phrase)


def code_block(task: Task, language: str, *, recursive: bool = False) -> str:
    """A fenced block in ``language`` doing ``task`` (a sketch for an unknown task);
    ``recursive``: the recursive version, where one is written out."""
    known = _KNOWN.get(task.key, {}).get(language)
    if recursive:
        known = _RECURSIVE.get(task.key, {}).get(language, known)
    body = known if known is not None else _sketch(task, language)
    return f"```{language}\n{body.strip()}\n```"


def _sketch(task: Task, language: str) -> str:
    what = task.phrase or " ".join(task.words) or "the task"
    what = what.replace("*/", "* /").replace("\n", " ")[:80]
    snake, camel, pascal = task.snake, task.camel, task.pascal
    sketches = {
        "python": f'''
def {snake}(text: str) -> str:
    """{what[:1].upper() + what[1:]}."""
    cleaned = text.strip()
    if not cleaned:
        raise ValueError("{snake}: empty input")
    # The work on `cleaned` goes here; this sketch returns it unchanged.
    return cleaned


print({snake}("example input"))
''',
        "javascript": f'''
// {what}
function {camel}(text) {{
  const cleaned = text.trim();
  if (cleaned.length === 0) throw new Error("{camel}: empty input");
  // The work on `cleaned` goes here; this sketch returns it unchanged.
  return cleaned;
}}

console.log({camel}("example input"));
''',
        "typescript": f'''
// {what}
export function {camel}(text: string): string {{
  const cleaned = text.trim();
  if (cleaned.length === 0) throw new Error("{camel}: empty input");
  // The work on `cleaned` goes here; this sketch returns it unchanged.
  return cleaned;
}}
''',
        "go": f'''
package main

import (
	"errors"
	"fmt"
	"strings"
)

// {pascal} {what}.
func {pascal}(text string) (string, error) {{
	cleaned := strings.TrimSpace(text)
	if cleaned == "" {{
		return "", errors.New("{camel}: empty input")
	}}
	// The work on cleaned goes here; this sketch returns it unchanged.
	return cleaned, nil
}}

func main() {{
	fmt.Println({pascal}("example input"))
}}
''',
        "rust": f'''
/// {what[:1].upper() + what[1:]}.
fn {snake}(text: &str) -> Result<String, String> {{
    let cleaned = text.trim();
    if cleaned.is_empty() {{
        return Err("{snake}: empty input".to_string());
    }}
    // The work on `cleaned` goes here; this sketch returns it unchanged.
    Ok(cleaned.to_string())
}}

fn main() {{
    println!("{{:?}}", {snake}("example input"));
}}
''',
        "java": f'''
public class {pascal} {{
    /** {what[:1].upper() + what[1:]}. */
    static String {camel}(String text) {{
        String cleaned = text.strip();
        if (cleaned.isEmpty()) throw new IllegalArgumentException("{camel}: empty input");
        // The work on cleaned goes here; this sketch returns it unchanged.
        return cleaned;
    }}

    public static void main(String[] args) {{
        System.out.println({camel}("example input"));
    }}
}}
''',
        "kotlin": f'''
// {what}
fun {camel}(text: String): String {{
    val cleaned = text.trim()
    require(cleaned.isNotEmpty()) {{ "{camel}: empty input" }}
    // The work on cleaned goes here; this sketch returns it unchanged.
    return cleaned
}}
''',
        "swift": f'''
// {what}
func {camel}(_ text: String) throws -> String {{
    let cleaned = text.trimmingCharacters(in: .whitespaces)
    guard !cleaned.isEmpty else {{ throw NSError(domain: "{camel}", code: 1) }}
    // The work on cleaned goes here; this sketch returns it unchanged.
    return cleaned
}}
''',
        "cpp": f'''
#include <stdexcept>
#include <string>

// {what}
std::string {snake}(const std::string& text) {{
    if (text.empty()) throw std::invalid_argument("{snake}: empty input");
    // The work on text goes here; this sketch returns it unchanged.
    return text;
}}
''',
        "csharp": f'''
// {what}
public static string {pascal}(string text)
{{
    var cleaned = text.Trim();
    if (cleaned.Length == 0) throw new ArgumentException("{camel}: empty input");
    // The work on cleaned goes here; this sketch returns it unchanged.
    return cleaned;
}}
''',
        "c": f'''
#include <stdio.h>
#include <string.h>

/* {what} */
int {snake}(const char *text) {{
    if (text == NULL || strlen(text) == 0) return -1;
    /* The work on text goes here; this sketch only checks it. */
    return 0;
}}
''',
        "ruby": f'''
# {what}
def {snake}(text)
  cleaned = text.strip
  raise ArgumentError, "{snake}: empty input" if cleaned.empty?
  # The work on cleaned goes here; this sketch returns it unchanged.
  cleaned
end
''',
        "php": f'''
<?php
// {what}
function {camel}(string $text): string {{
    $cleaned = trim($text);
    if ($cleaned === "") throw new InvalidArgumentException("{camel}: empty input");
    // The work on $cleaned goes here; this sketch returns it unchanged.
    return $cleaned;
}}
''',
        "bash": f'''
# {what}
set -euo pipefail
{snake}() {{
  local input="${{1:?{snake}: empty input}}"
  # The work on "$input" goes here; this sketch prints it unchanged.
  printf '%s\\n' "$input"
}}
{snake} "example input"
''',
        "sql": f'''
-- {what}
SELECT *
FROM items
WHERE name IS NOT NULL
ORDER BY name
LIMIT 100;
''',
    }
    return sketches.get(language, sketches["python"])


_KNOWN: dict[str, dict[str, str]] = {
    "retry": {
        "python": '''
import time
from collections.abc import Callable


def with_retries(call: Callable[[], str], attempts: int = 3, delay: float = 0.5) -> str:
    """Call `call`, retrying with exponential back-off on network errors."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except OSError:
            if attempt == attempts:
                raise
            time.sleep(delay * 2 ** (attempt - 1))
    raise RuntimeError("unreachable")
''',
    },
    "palindrome": {
        "python": '''
def is_palindrome(text: str) -> bool:
    """Whether `text` reads the same backwards, ignoring case and non-letters."""
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]


print(is_palindrome("A man, a plan, a canal: Panama"))  # True
''',
        "javascript": '''
function isPalindrome(text) {
  const letters = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  return letters === [...letters].reverse().join("");
}

console.log(isPalindrome("A man, a plan, a canal: Panama")); // true
''',
        "typescript": '''
export function isPalindrome(text: string): boolean {
  const letters = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  return letters === [...letters].reverse().join("");
}
''',
        "go": '''
package main

import (
	"fmt"
	"strings"
	"unicode"
)

// IsPalindrome reports whether text reads the same backwards, ignoring case and punctuation.
func IsPalindrome(text string) bool {
	var letters []rune
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters = append(letters, r)
		}
	}
	for i, j := 0, len(letters)-1; i < j; i, j = i+1, j-1 {
		if letters[i] != letters[j] {
			return false
		}
	}
	return true
}

func main() {
	fmt.Println(IsPalindrome("A man, a plan, a canal: Panama")) // true
}
''',
        "rust": '''
/// Whether `text` reads the same backwards, ignoring case and punctuation.
fn is_palindrome(text: &str) -> bool {
    let letters: Vec<char> = text
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(|c| c.to_lowercase())
        .collect();
    letters.iter().eq(letters.iter().rev())
}

fn main() {
    println!("{}", is_palindrome("A man, a plan, a canal: Panama")); // true
}
''',
        "java": '''
public class Palindrome {
    static boolean isPalindrome(String text) {
        String letters = text.toLowerCase().replaceAll("[^a-z0-9]", "");
        return new StringBuilder(letters).reverse().toString().equals(letters);
    }

    public static void main(String[] args) {
        System.out.println(isPalindrome("A man, a plan, a canal: Panama")); // true
    }
}
''',
    },
    "fibonacci": {
        "python": '''
def fibonacci(n: int) -> list[int]:
    """The first `n` Fibonacci numbers."""
    numbers, a, b = [], 0, 1
    for _ in range(n):
        numbers.append(a)
        a, b = b, a + b
    return numbers


print(fibonacci(10))  # [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
''',
        "javascript": '''
function fibonacci(n) {
  const numbers = [];
  let [a, b] = [0, 1];
  for (let i = 0; i < n; i++) {
    numbers.push(a);
    [a, b] = [b, a + b];
  }
  return numbers;
}

console.log(fibonacci(10)); // [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
''',
        "typescript": '''
export function fibonacci(n: number): number[] {
  const numbers: number[] = [];
  let [a, b] = [0, 1];
  for (let i = 0; i < n; i++) {
    numbers.push(a);
    [a, b] = [b, a + b];
  }
  return numbers;
}
''',
        "go": '''
package main

import "fmt"

// Fibonacci returns the first n Fibonacci numbers.
func Fibonacci(n int) []int {
	numbers := make([]int, 0, n)
	a, b := 0, 1
	for i := 0; i < n; i++ {
		numbers = append(numbers, a)
		a, b = b, a+b
	}
	return numbers
}

func main() {
	fmt.Println(Fibonacci(10)) // [0 1 1 2 3 5 8 13 21 34]
}
''',
        "rust": '''
/// The first `n` Fibonacci numbers.
fn fibonacci(n: usize) -> Vec<u64> {
    let mut numbers = Vec::with_capacity(n);
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        numbers.push(a);
        (a, b) = (b, a + b);
    }
    numbers
}

fn main() {
    println!("{:?}", fibonacci(10)); // [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
}
''',
        "java": '''
import java.util.ArrayList;
import java.util.List;

public class Fibonacci {
    static List<Long> fibonacci(int n) {
        List<Long> numbers = new ArrayList<>();
        long a = 0, b = 1;
        for (int i = 0; i < n; i++) {
            numbers.add(a);
            long next = a + b;
            a = b;
            b = next;
        }
        return numbers;
    }

    public static void main(String[] args) {
        System.out.println(fibonacci(10));
    }
}
''',
    },
    "factorial": {
        "python": '''
def factorial(n: int) -> int:
    """n! for n >= 0."""
    if n < 0:
        raise ValueError("factorial is defined for n >= 0")
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result


print(factorial(5))  # 120
''',
        "javascript": '''
function factorial(n) {
  if (n < 0) throw new RangeError("factorial is defined for n >= 0");
  let result = 1n;
  for (let k = 2n; k <= BigInt(n); k++) result *= k;
  return result;
}

console.log(factorial(5)); // 120n
''',
        "typescript": '''
export function factorial(n: number): bigint {
  if (n < 0) throw new RangeError("factorial is defined for n >= 0");
  let result = 1n;
  for (let k = 2n; k <= BigInt(n); k++) result *= k;
  return result;
}
''',
        "go": '''
package main

import "fmt"

// Factorial returns n! for n >= 0.
func Factorial(n uint64) uint64 {
	result := uint64(1)
	for k := uint64(2); k <= n; k++ {
		result *= k
	}
	return result
}

func main() {
	fmt.Println(Factorial(5)) // 120
}
''',
        "rust": '''
/// n! for n >= 0 (`None` when it overflows a u64).
fn factorial(n: u64) -> Option<u64> {
    (2..=n).try_fold(1u64, |acc, k| acc.checked_mul(k))
}

fn main() {
    println!("{:?}", factorial(5)); // Some(120)
}
''',
        "java": '''
import java.math.BigInteger;

public class Factorial {
    static BigInteger factorial(int n) {
        if (n < 0) throw new IllegalArgumentException("factorial is defined for n >= 0");
        BigInteger result = BigInteger.ONE;
        for (int k = 2; k <= n; k++) result = result.multiply(BigInteger.valueOf(k));
        return result;
    }

    public static void main(String[] args) {
        System.out.println(factorial(5)); // 120
    }
}
''',
    },
    "prime": {
        "python": '''
def is_prime(n: int) -> bool:
    """Whether `n` is a prime number (trial division up to its square root)."""
    if n < 2:
        return False
    k = 2
    while k * k <= n:
        if n % k == 0:
            return False
        k += 1
    return True


print([n for n in range(20) if is_prime(n)])  # [2, 3, 5, 7, 11, 13, 17, 19]
''',
        "javascript": '''
function isPrime(n) {
  if (n < 2) return false;
  for (let k = 2; k * k <= n; k++) {
    if (n % k === 0) return false;
  }
  return true;
}

console.log([...Array(20).keys()].filter(isPrime)); // [2, 3, 5, 7, 11, 13, 17, 19]
''',
        "typescript": '''
export function isPrime(n: number): boolean {
  if (n < 2) return false;
  for (let k = 2; k * k <= n; k++) {
    if (n % k === 0) return false;
  }
  return true;
}
''',
        "go": '''
package main

import "fmt"

// IsPrime reports whether n is a prime number.
func IsPrime(n int) bool {
	if n < 2 {
		return false
	}
	for k := 2; k*k <= n; k++ {
		if n%k == 0 {
			return false
		}
	}
	return true
}

func main() {
	fmt.Println(IsPrime(17)) // true
}
''',
        "rust": '''
/// Whether `n` is a prime number.
fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|k| k * k <= n).all(|k| n % k != 0)
}

fn main() {
    println!("{}", is_prime(17)); // true
}
''',
        "java": '''
public class Prime {
    static boolean isPrime(long n) {
        if (n < 2) return false;
        for (long k = 2; k * k <= n; k++) {
            if (n % k == 0) return false;
        }
        return true;
    }

    public static void main(String[] args) {
        System.out.println(isPrime(17)); // true
    }
}
''',
    },
    "word_count": {
        "python": '''
from collections import Counter


def count_words(text: str) -> dict[str, int]:
    """How often each word occurs in `text`, case-insensitively, most frequent first."""
    words = [w.strip(".,;:!?\\"'()").lower() for w in text.split()]
    return dict(Counter(w for w in words if w).most_common())


print(count_words("the cat and the hat"))  # {'the': 2, 'cat': 1, 'and': 1, 'hat': 1}
''',
        "javascript": '''
function countWords(text) {
  const counts = new Map();
  for (const word of text.toLowerCase().match(/[\\p{L}\\p{N}']+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

console.log(countWords("the cat and the hat")); // Map { 'the' => 2, ... }
''',
        "typescript": '''
export function countWords(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\\p{L}\\p{N}']+/gu) ?? []) {
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}
''',
        "go": '''
package main

import (
	"fmt"
	"strings"
)

// CountWords returns how often each word occurs in text, case-insensitively.
func CountWords(text string) map[string]int {
	counts := make(map[string]int)
	for _, word := range strings.Fields(strings.ToLower(text)) {
		counts[strings.Trim(word, ".,;:!?\\"'()")]++
	}
	return counts
}

func main() {
	fmt.Println(CountWords("the cat and the hat")) // map[and:1 cat:1 hat:1 the:2]
}
''',
        "rust": '''
use std::collections::HashMap;

/// How often each word occurs in `text`, case-insensitively.
fn count_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if !word.is_empty() {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    counts
}

fn main() {
    println!("{:?}", count_words("the cat and the hat"));
}
''',
        "java": '''
import java.util.Map;
import java.util.TreeMap;

public class WordCount {
    static Map<String, Integer> countWords(String text) {
        Map<String, Integer> counts = new TreeMap<>();
        for (String word : text.toLowerCase().split("\\\\W+")) {
            if (!word.isEmpty()) counts.merge(word, 1, Integer::sum);
        }
        return counts;
    }

    public static void main(String[] args) {
        System.out.println(countWords("the cat and the hat")); // {and=1, cat=1, hat=1, the=2}
    }
}
''',
    },
    "reverse": {
        "python": '''
def reverse_string(text: str) -> str:
    """`text` backwards."""
    return text[::-1]


print(reverse_string("stressed"))  # desserts
''',
        "javascript": '''
function reverseString(text) {
  return [...text].reverse().join("");
}

console.log(reverseString("stressed")); // desserts
''',
        "typescript": '''
export function reverseString(text: string): string {
  return [...text].reverse().join("");
}
''',
        "go": '''
package main

import "fmt"

// ReverseString returns text backwards, rune by rune.
func ReverseString(text string) string {
	runes := []rune(text)
	for i, j := 0, len(runes)-1; i < j; i, j = i+1, j-1 {
		runes[i], runes[j] = runes[j], runes[i]
	}
	return string(runes)
}

func main() {
	fmt.Println(ReverseString("stressed")) // desserts
}
''',
        "rust": '''
/// `text` backwards, character by character.
fn reverse_string(text: &str) -> String {
    text.chars().rev().collect()
}

fn main() {
    println!("{}", reverse_string("stressed")); // desserts
}
''',
        "java": '''
public class ReverseString {
    static String reverseString(String text) {
        return new StringBuilder(text).reverse().toString();
    }

    public static void main(String[] args) {
        System.out.println(reverseString("stressed")); // desserts
    }
}
''',
    },
}


# Recursive versions, for a follow-up that asks for one ("make it recursive").
_RECURSIVE: dict[str, dict[str, str]] = {
    "palindrome": {
        "python": '''
def is_palindrome(text: str) -> bool:
    """Whether `text` reads the same backwards, ignoring case and non-letters: recursively,
    comparing the outer pair and then what is inside it."""
    letters = "".join(c.lower() for c in text if c.isalnum())
    if len(letters) < 2:
        return True
    return letters[0] == letters[-1] and is_palindrome(letters[1:-1])


print(is_palindrome("A man, a plan, a canal: Panama"))  # True
''',
        "javascript": '''
function isPalindrome(text) {
  const letters = text.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (letters.length < 2) return true;
  return letters[0] === letters.at(-1) && isPalindrome(letters.slice(1, -1));
}

console.log(isPalindrome("A man, a plan, a canal: Panama")); // true
''',
    },
    "factorial": {
        "python": '''
def factorial(n: int) -> int:
    """n! for n >= 0, recursively: n * (n - 1)!."""
    if n < 0:
        raise ValueError("factorial is defined for n >= 0")
    return 1 if n < 2 else n * factorial(n - 1)


print(factorial(5))  # 120
''',
        "javascript": '''
function factorial(n) {
  if (n < 0) throw new RangeError("factorial is defined for n >= 0");
  return n < 2 ? 1n : BigInt(n) * factorial(n - 1);
}

console.log(factorial(5)); // 120n
''',
    },
    "fibonacci": {
        "python": '''
from functools import cache


@cache
def fibonacci(n: int) -> int:
    """The n-th Fibonacci number, recursively (memoised, so it stays linear)."""
    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)


print([fibonacci(i) for i in range(10)])  # [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]
''',
    },
    "reverse": {
        "python": '''
def reverse_string(text: str) -> str:
    """`text` backwards, recursively: the last character, then the rest reversed."""
    return text if len(text) < 2 else text[-1] + reverse_string(text[:-1])


print(reverse_string("stressed"))  # desserts
''',
    },
}
