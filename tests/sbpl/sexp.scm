;; sexp.scm FILE: read FILE as Scheme data with Guile's own reader (a
;; Seatbelt profile is a list of s-expressions) and print each form as one
;; JSON line: a list as an array, a symbol as a string, a string as
;; {"str": ...}, a number as a number. A form the reader cannot read ends the
;; program with an error: the profile is not well-formed.
(use-modules (ice-9 format))
(fluid-set! %default-port-encoding "UTF-8")
(set-port-encoding! (current-output-port) "UTF-8")

(define (json-string s)
  (string-append
   "\""
   (apply string-append
          (map (lambda (c)
                 (cond ((char=? c #\") "\\\"")
                       ((char=? c #\\) "\\\\")
                       ((< (char->integer c) 32) (format #f "\\u~4,'0x" (char->integer c)))
                       (else (string c))))
               (string->list s)))
   "\""))

(define (json x)
  (cond ((null? x) "[]")
        ((pair? x)
         (if (not (list? x)) (error "an improper list" x))
         (string-append "[" (string-join (map json x) ",") "]"))
        ((symbol? x) (json-string (symbol->string x)))
        ((string? x) (string-append "{\"str\":" (json-string x) "}"))
        ((and (integer? x) (exact? x)) (number->string x))
        (else (error "not SBPL data" x))))

;; SBPL's regex literal, #"...": read as (regex-literal "...") with its
;; backslashes kept, so a profile that holds one is still Scheme data here
(read-hash-extend #\"
  (lambda (c port)
    (let loop ((acc '()))
      (let ((ch (read-char port)))
        (cond ((eof-object? ch) (error "a regex literal left open"))
              ((char=? ch #\") (list 'regex-literal (list->string (reverse acc))))
              ((char=? ch #\\) (loop (cons (read-char port) (cons ch acc))))
              (else (loop (cons ch acc))))))))

(define port (open-input-file (cadr (command-line))))
(let loop ((form (read port)))
  (unless (eof-object? form)
    (display (json form))
    (newline)
    (loop (read port))))
