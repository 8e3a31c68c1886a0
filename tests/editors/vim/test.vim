" Vim + ALE end-to-end driver for `gradwarden serve` (silent Ex mode):
"   GW_CMD='["python","-m","gradwarden","serve"]' GW_RESULT=result.json \
"   vim -N -u vimrc -i NONE -es -c 'source test.vim' sample.py < /dev/null
" Exit status 0 = every check passed, 1 = a check failed (details in GW_RESULT).
" Waits are for events; their limit only stops a hung run (never a speed check).
let s:wait = empty($GW_WAIT_MS) ? 120000 : str2nr($GW_WAIT_MS)
let s:checks = []
let s:failed = 0
function! s:Check(name, ok, detail) abort
  call add(s:checks, {'name': a:name, 'ok': a:ok ? v:true : v:false, 'detail': string(a:detail)})
  if !a:ok | let s:failed = 1 | endif
endfunction
function! s:Wait(expr, ms) abort
  let l:t = 0
  while !eval(a:expr) && l:t < a:ms
    sleep 50m
    let l:t += 50
  endwhile
  return eval(a:expr)
endfunction
function! s:Finish() abort
  call writefile([json_encode({'vim': v:version, 'ok': !s:failed ? v:true : v:false, 'checks': s:checks,
  \   'final_buffer': getbufline(s:buf, 1, '$')})], $GW_RESULT)
  call ale#lsp#StopAll()
  if s:failed | cquit | else | qall! | endif
endfunction
function! s:Codes() abort
  return map(copy(ale#engine#GetLoclist(s:buf)), 'v:val.code')
endfunction
function! s:PreviewText() abort
  for l:w in range(1, winnr('$'))
    if getwinvar(l:w, '&previewwindow')
      return join(getbufline(winbufnr(l:w), 1, '$'), "\n")
    endif
  endfor
  return ''
endfunction
let s:offered = []
let s:want = ''
function! s:Menu(data, items) abort
  let s:offered = map(copy(a:items), 'v:val[1].title')
  for l:item in a:items
    if l:item[1].title =~# s:want
      call ale#codefix#ApplyLSPCodeAction(a:data, l:item[1])
      return
    endif
  endfor
endfunction

let s:buf = bufnr('')
try
  " 1. diagnostics (pushed: ALE does not pull)
  ALELint
  call s:Check('diagnostic received', s:Wait('s:Codes() == ["GW201"]', s:wait), ale#engine#GetLoclist(s:buf))
  let s:l = ale#engine#GetLoclist(s:buf)
  call s:Check('diagnostic position', len(s:l) == 1 && s:l[0].lnum == 5 && s:l[0].type is# 'E', s:l)
  " 2. hover -> the preview window
  call cursor(5, 1)
  ALEHover
  call s:Check('hover timeline', s:Wait('s:PreviewText() =~# "finds version 1"', s:wait), s:PreviewText())
  pclose
  " 3. the out-of-place quick fix through ALE's code-fix machinery
  let s:want = 'out of place'
  call cursor(5, 1)
  call ale#codefix#Execute(0, function('s:Menu'))
  call s:Check('quick fix applied', s:Wait('getline(5) is# "y = y + 1"', s:wait), {'offered': s:offered, 'line5': getline(5)})
  ALELint
  call s:Check('diagnostic cleared', s:Wait('empty(ale#engine#GetLoclist(s:buf))', s:wait), ale#engine#GetLoclist(s:buf))
  " 4. typing the hazard again (didChange), then the noqa action
  call setline(5, 'y += 1')
  ALELint
  call s:Check('diagnostic after typing', s:Wait('s:Codes() == ["GW201"]', s:wait), ale#engine#GetLoclist(s:buf))
  let s:want = 'Disable GW201'
  call cursor(5, 1)
  call ale#codefix#Execute(0, function('s:Menu'))
  call s:Check('noqa applied', s:Wait('getline(5) is# "y += 1  # noqa: GW201"', s:wait), {'offered': s:offered, 'line5': getline(5)})
  ALELint
  call s:Check('silenced', s:Wait('empty(ale#engine#GetLoclist(s:buf))', s:wait), ale#engine#GetLoclist(s:buf))
catch
  call s:Check('vim error', 0, v:exception . ' @ ' . v:throwpoint)
endtry
call s:Finish()
